"""Reading a file a user gives Quorum (a topology, an inventory, a policy): one way, whose every failure is the
project's error naming the file, the problem and the fix, never a traceback.

A user file is small (at most MAX_BYTES), UTF-8 YAML. Refused with the line: a key given twice in one mapping (YAML
keeps the last one silently), an integer of more than MAX_DIGITS digits (Python refuses to parse 4300 digits, and no
setting needs 19). Dates stay text, so a date that is not one (2026-13-45) is refused by the field that reads it,
which names the field. Anything else PyYAML raises (a value error of a constructor, a nesting too deep to build) is
refused as not valid YAML."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from yaml.constructor import ConstructorError

from harness.errors import QuorumError

MAX_BYTES = 1_000_000  # the largest checked-in topology is ~3 kB; 5 MB of YAML takes PyYAML ~5 s
MAX_DIGITS = 18  # every integer setting fits in 18 digits; Python's own limit is 4300


class _UserLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys and huge integers, and keeping dates as text."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                raise ConstructorError("while reading a mapping", node.start_mark, "a key that is itself a list or "
                                       "a mapping", key_node.start_mark) from None
            if first is not None:
                raise ConstructorError("while reading a mapping", node.start_mark,
                                       f"the key {key!r} is given twice (first on line {first + 1}); only one can "
                                       "count", key_node.start_mark)
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = len(re.sub(r"[^0-9a-fA-F]", "", self.construct_scalar(node).removeprefix("0x")))
        if digits > MAX_DIGITS:
            raise ConstructorError(None, None, f"an integer of {digits} digits: no setting takes more than "
                                   f"{MAX_DIGITS}", node.start_mark)
        return super().construct_yaml_int(node)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> str:
        return self.construct_scalar(node)


_UserLoader.add_constructor("tag:yaml.org,2002:int", _UserLoader.construct_yaml_int)
_UserLoader.add_constructor("tag:yaml.org,2002:timestamp", _UserLoader.construct_yaml_timestamp)


def read_yaml(path: str | Path, error: type[QuorumError], what: str, example: str) -> object:
    """The YAML document of a user's file, or `error` naming the file, the problem and the fix. `what` names the
    kind of file ("topology file"), `example` a good one."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{what} {path} does not exist", f"give a path such as {example}")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise error(f"{path} is {size} bytes, more than a {what} can be ({MAX_BYTES})",
                    f"give the {what} itself (see {example}), not a larger file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{path} is not UTF-8 text ({failure.reason} at byte {failure.start})",
                    f"save {path} as UTF-8") from None
    loader = None
    try:
        loader = _UserLoader(text)
        loader.name = str(path)  # PyYAML's messages name the file, and still quote the lines around a problem
        return loader.get_single_data()
    except yaml.YAMLError as failure:
        raise error(f"{path} is not valid YAML: {failure}", f"fix {path} where the lines above say") from None
    except (ValueError, TypeError, OverflowError, RecursionError) as failure:
        raise error(f"{path} is not valid YAML: {type(failure).__name__}: {str(failure)[:300]}",
                    f"fix {path} (compare it with {example})") from None
    finally:
        if loader is not None:
            loader.dispose()
