"""The loaders of what users write (topologies, kind topologies, promotion policies): any input, however broken,
gives a model or a QuorumError (a one-line problem and its fix), never another exception."""

import copy
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.backends.kind.topology import load_kind_topology
from harness.errors import QuorumError
from harness.gate import Policy
from harness.topology import load_topology

ROOT = Path(__file__).resolve().parents[2]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=40))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                      max_leaves=12)
LOADERS = {"clusters/ha3.yaml": load_topology, "clusters/kind.yaml": load_kind_topology, "gate.yaml": Policy.load}
FUZZ = settings(max_examples=int(__import__("os").environ.get("QUORUM_FUZZ_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def paths(document, prefix=()):
    """Every key path of a parsed YAML document."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield (*prefix, key)
            yield from paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield (*prefix, index)
            yield from paths(value, (*prefix, index))


def loads_or_says_why(loader, path: Path) -> None:
    try:
        loader(path)
    except QuorumError as error:
        assert error.problem and "Traceback" not in error.problem


@FUZZ
@given(data=st.data())
def test_a_valid_file_with_any_one_value_replaced_loads_or_is_refused_with_a_quorum_error(tmp_path_factory, data):
    name = data.draw(st.sampled_from(sorted(LOADERS)))
    document = yaml.safe_load((ROOT / name).read_text())
    where = data.draw(st.sampled_from(list(paths(document))))
    broken = copy.deepcopy(document)
    parent = broken
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = data.draw(VALUES)
    path = tmp_path_factory.mktemp("fuzz") / "input.yaml"
    path.write_text(yaml.safe_dump(broken))
    loads_or_says_why(LOADERS[name], path)


@FUZZ
@given(data=st.data(), content=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode),
                                          VALUES.map(lambda v: yaml.safe_dump(v).encode())))
def test_any_bytes_load_or_are_refused_with_a_quorum_error(tmp_path_factory, data, content):
    loader = LOADERS[data.draw(st.sampled_from(sorted(LOADERS)))]
    path = tmp_path_factory.mktemp("fuzz") / "input.yaml"
    path.write_bytes(content)
    loads_or_says_why(loader, path)
