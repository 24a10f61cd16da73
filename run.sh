#!/usr/bin/env bash
# The set-up-free entry points of the README:
#   ./run.sh scenarios   the main job: the scenario suites against the default topology
#   ./run.sh tests       Quorum's own tests: presubmit, what CI runs (--deep: the deep tier, the tests CI skips)
#   ./run.sh nightly     both tiers, the suites in the nightly profile, and the repeat bench for a bounded time
# Each installs what it needs: Debian packages, a Python virtualenv (cached by the hash of the dependency list in
# pyproject.toml), and the toolchain (Kubernetes built from the Go module proxy, cached by version).
# Extra arguments go to pytest.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
job="${1:-}"
shift || true
case "$job" in
  scenarios|tests|nightly) ;;
  *) echo "usage: ./run.sh scenarios|tests|nightly [pytest arguments]" >&2; exit 2 ;;
esac


if [ "$(id -u)" != 0 ]; then
  echo "error: Quorum needs root: it creates network namespaces, bridges and iptables rules, and installs Debian packages." >&2
  echo "fix: sudo ./run.sh $job" >&2
  exit 2
fi

cache="${QUORUM_CACHE:-$HOME/.cache/quorum}"
mkdir -p "$cache"

# Python: a virtualenv keyed by the dependency list, so a second run reuses it. It is marked
# ready only after every install succeeded; a half-built one is removed and built again.
python="${QUORUM_PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "error: Quorum needs Python >= 3.11 ($python is $("$python" --version 2>&1))." >&2
  echo "fix: apt-get install python3 (Debian 12 ships 3.11), or set QUORUM_PYTHON=/path/to/python3.11" >&2
  exit 2
fi
# keyed by the dependency list and the interpreter, not the whole pyproject.toml: a new marker or package-data line
# must not rebuild the virtualenv. And by the checkout: the venv's `quorum` runs the checkout installed into it last,
# so two checkouts sharing one would run each other's code.
deps="$("$python" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))')"
venv="$cache/venv-$( (echo "$deps"; "$python" --version; pwd -P) | sha256sum | cut -c1-16)"
if [ ! -e "$venv/.ready" ]; then
  echo "▶ Python virtualenv $venv"
  if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
  fi
  rm -rf "$venv"
  "$python" -m venv "$venv"
  echo "$deps" > "$venv/requirements.txt"
  "$venv/bin/pip" install -q --upgrade "setuptools>=68" wheel
  "$venv/bin/pip" install -q -r "$venv/requirements.txt"
  touch "$venv/.ready"
fi
# the harness itself, from this checkout (seconds; makes `quorum` point here)
"$venv/bin/pip" install -q --no-deps --no-build-isolation -e . >/dev/null
export PATH="$venv/bin:$PATH"

quorum toolchain install
quorum toolchain install --upgrade-target  # the release the lifecycle suite upgrades to (its control plane)
# the deep tier's later releases of the lifecycle matrix, built here rather than inside its tests beside two cluster
# lanes: a new machine's builds then count as set-up, and a release the module proxy refuses fails before any cluster
if [ "$job" = tests ] && [[ " $* " == *" --deep "* ]]; then quorum toolchain install --release-matrix; fi
echo "set-up: ${SECONDS} s"

if [ "$job" = nightly ]; then
  # one command for the night (docs/ci.md): both tiers of Quorum's own tests, the suites in the nightly profile
  # judged and reported, then the repeat bench (the false-alarm rate) for at most QUORUM_NIGHTLY_REPEAT_HOURS. The
  # nightly reports go to their own directory, so that the report's trends run across nights.
  export QUORUM_REPORTS="${QUORUM_REPORTS:-reports/nightly}"
  failed=0
  "$0" tests || failed=$?
  "$0" tests --deep || failed=$?
  "$0" scenarios --profile nightly "$@" || failed=$?
  python bench/repeat.py scenarios/etcd scenarios/leader_election scenarios/self_healing --runs 5 \
    --max-hours "${QUORUM_NIGHTLY_REPEAT_HOURS:-1}" || failed=$?
  echo "nightly: report $QUORUM_REPORTS/allure-report/index.html, repeat bench docs/benchmarks.md (exit $failed)"
  exit "$failed"
fi

status=0
case "$job" in
  tests)
    # two lanes of independent clusters side by side and a third of tests without a cluster at a lower priority
    # (tests/conftest.py), with the slowest tests listed to keep CI short; then, alone, the tests that act on every
    # run of the machine (quorum down --all) or judge throughput and latency (bandwidth floors, the load suite's
    # SLOs), which the other lane would distort
    lanes=0 alone=0
    export QUORUM_LANE_LOG; QUORUM_LANE_LOG="$(mktemp)"
    # the docker lane's kind cluster is handed to the alone phase instead of a second build (tests/integration/
    # handoff.py); whatever is left there is taken down when this script exits, however it ends
    export QUORUM_KIND_HANDOFF; QUORUM_KIND_HANDOFF="$(mktemp -d)"
    # the lanes' tests keep their clusters' run directories, etcd's data with them, in pytest's base temp: on tmpfs,
    # so that the docker lane's image and container I/O on the shared disk does not stall the process lane's etcd
    # fsyncs (docs/design.md, 2026-12-03); on disk as before when /dev/shm is not a tmpfs with 4 GiB free
    lanes_tmp="" basetemp=()
    if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && \
        [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -ge $((4 * 1024 * 1024)) ]; then
      lanes_tmp="$(mktemp -d /dev/shm/quorum-lanes.XXXXXX)"
      basetemp=(--basetemp "$lanes_tmp/pytest")
    fi
    cleanup() {
      if [ ! -e "$QUORUM_KIND_HANDOFF/run/state.json" ] || quorum down "$QUORUM_KIND_HANDOFF/run"; then
        rm -rf "$QUORUM_KIND_HANDOFF"
      fi
      # a cluster a killed test left registered keeps its run directory, for quorum down --all to find (a unit
      # test's fake run leaves a state.json but no registration)
      if [ -n "$lanes_tmp" ] && ! find "${QUORUM_REGISTRY:-/run/quorum/runs}" -maxdepth 1 -type l \
          -lname "$lanes_tmp/*" 2>/dev/null | grep -q .; then
        rm -rf "$lanes_tmp"
      fi
    }
    trap cleanup EXIT
    pytest tests -n 3 --durations=25 "${basetemp[@]}" "$@" || lanes=$?
    cat "$QUORUM_LANE_LOG"; rm -f "$QUORUM_LANE_LOG"  # each lane's span: how to balance them (tests/conftest.py)
    pytest tests --alone --durations=10 -p no:cacheprovider "$@" || alone=$?
    # exit 5 is "selected nothing": fine for one pass (arguments such as -k may leave it empty), not for both
    case "$lanes:$alone" in
      0:0|0:5|5:0) status=0 ;;
      5:5) status=5 ;;
      *) status=$(( lanes != 0 && lanes != 5 ? lanes : alone )) ;;
    esac
    ;;
  scenarios)
    # the main job: the suites judged by the policy's objectives, the promotion gate, then the HTML report. The
    # policy: --policy FILE among the arguments; else gate-<backend>.yaml for --backend B when there is one (the
    # suites that kind of cluster can run, docs/gate.md); else gate.yaml
    policy="" backend="" previous=""
    for arg in "$@"; do
      case "$previous" in --policy) policy="$arg" ;; --backend) backend="$arg" ;; --target) backend=target ;; esac
      case "$arg" in
        --policy=*) policy="${arg#--policy=}" ;; --backend=*) backend="${arg#--backend=}" ;; --target=*) backend=target ;;
      esac
      previous="$arg"
    done
    if [ -z "$policy" ]; then
      policy=gate.yaml
      # gate-<backend>.yaml, or gate-target.yaml with --target (a cluster Quorum did not build: docs/target.md)
      if [[ "$backend" =~ ^[a-z0-9-]+$ ]] && [ -f "gate-$backend.yaml" ]; then policy="gate-$backend.yaml"; fi
      set -- --policy "$policy" "$@"
    fi
    echo "policy: $policy"
    # QUORUM_REPORTS: where the run's results, the report and the promoted runs go (default reports/ of this checkout)
    reports="${QUORUM_REPORTS:-reports}"
    run="$reports/histories/$(date +%Y%m%d-%H%M%S)"
    pytest scenarios --history-dir "$run" --alluredir "$reports/allure-results" --clean-alluredir "$@" || status=$?
    report=0 gate=0
    # the gate first (it compares the run with the runs it promoted before, and keeps this one if it promotes it),
    # then the report, which shows its decision as a page of its own
    quorum gate --policy "$policy" --results "$run" --store "$reports/promoted" || gate=$?
    gate_json=()
    [ -f "$run/gate.json" ] && gate_json=(--gate "$run/gate.json")
    quorum report --results "$reports/allure-results" --output "$reports/allure-report" \
      --histories "$reports/histories" "${gate_json[@]}" || report=$?
    echo
    echo "Histories and junit.xml: $run/"
    echo "report:                  $reports/allure-report/index.html$([ "$report" = 0 ] || echo ' (not rendered: see above)')"
    echo "gate:                    $run/gate.json (exit $gate: 0 promote, 1 block, 2 cannot judge; its page:" \
         "$reports/allure-report/gate.html)"
    # pytest's failure first (it names the scenario); a clean run still fails when the gate does not promote
    if [ "$status" = 0 ] || [ "$status" = 5 ] && [ "$gate" != 0 ]; then status=$gate; fi
    if [ "$status" = 0 ] && [ "$report" != 0 ]; then status=$report; fi
    ;;
esac
# pytest exits 5 when it collected nothing: that is a failure of this job, not a pass
[ "$status" = 5 ] && echo "error: pytest collected no tests" >&2
exit "$status"
