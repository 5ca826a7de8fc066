#!/usr/bin/env bash
# docs/runs.md's Slurm recipe on a real Slurm: a one-node cluster on localhost (Debian's slurm-wlm and
# munge: munged, slurmctld and slurmd with a generated slurm.conf, all in a temporary folder, private
# ports and socket), the job array of docs/examples/sweep.sbatch over a sweep of a few hundred scenarios
# (sbatch --array, --strided shards), then the dependent merge; waits with a bounded timeout and checks
# that the merged rows equal a single-process `llmsim run` of the same sweep byte for byte. A second
# merge without one shard must fail. Stops the daemons it started, whatever happens. CI runs it (.ci/run)
# after `scripts/deps.sh --dev`, which installs slurm-wlm and munge.
#
#   scripts/slurm-test.sh [LLMSIM_BINARY]     (default build/llmsim; needs root: the daemons run as it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
llmsim=$(realpath "${1:-$root/build/llmsim}")
timeout_s=${SLURM_TEST_TIMEOUT:-150}
shards=4
for tool in munged slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || { echo "slurm-test: $tool not found (scripts/deps.sh --dev)" >&2; exit 1; }
done
[ -x "$llmsim" ] || { echo "slurm-test: $llmsim: not an executable" >&2; exit 1; }

tmp=$(mktemp -d /tmp/llmsim-slurm.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  # The daemons this script started, by their pid files and ids; nothing else.
  for f in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munged.pid"; do
    [ -f "$f" ] && pids+=("$(cat "$f")")
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    for log in slurmctld slurmd munged; do
      [ -f "$tmp/$log.log" ] && { echo "--- $log.log (last lines)"; tail -n 20 "$tmp/$log.log"; } >&2
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT INT TERM

# Free TCP ports for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in ss))')

# MUNGE with its own key, socket and state.
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/work/logs"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
       --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/munge.seed"

host=$(hostname -s)
node=$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$host NodeAddr=127.0.0.1/")
cat >"$tmp/slurm.conf" <<EOF
ClusterName=llmsimci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
$node State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"

deadline=$((SECONDS + timeout_s))
until sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; do
  [ $SECONDS -lt $deadline ] || { echo "slurm-test: the node never came up" >&2; sinfo >&2 || true; exit 1; }
  sleep 1
done

# A sweep of 288 training scenarios (4 x 3 x 4 x 3 x 2; --fast: the closed form), in the work folder.
cd "$tmp/work"
cat >sweep.json <<'EOF'
{"model": "llama-3-8b", "system": "dgx-h100", "gpus": 64,
 "training": {"seq_len": 4096, "global_batch": 512, "micro_batch": 1, "precision": "bf16"},
 "parallel": {"tp": 1, "pp": 1},
 "sweep": {"parallel.tp": [1, 2, 4, 8], "parallel.pp": [1, 2, 4], "training.micro_batch": [1, 2, 4, 8],
           "training.seq_len": [2048, 4096, 8192], "training.recompute": ["selective", "full"]}}
EOF
"$llmsim" run sweep.json --fast -j 2 -o single.jsonl 2>/dev/null
rows=$(wc -l <single.jsonl)
[ "$rows" -ge 200 ] || { echo "slurm-test: the sweep has $rows rows, expected a few hundred" >&2; exit 1; }

# docs/examples/sweep.sbatch as docs/runs.md submits it: the array (here $shards tasks of one CPU),
# then the merge once every task has succeeded.
sed -e "s/^#SBATCH --array=.*/#SBATCH --array=1-$shards/" -e 's/^#SBATCH --cpus-per-task=.*/#SBATCH --cpus-per-task=1/' \
    -e 's/^#SBATCH --time=.*/#SBATCH --time=00:05:00/' "$root/docs/examples/sweep.sbatch" >sweep.sbatch
mkdir -p bin && ln -s "$llmsim" bin/llmsim
export PATH=$tmp/work/bin:$PATH
array=$(sbatch --parsable sweep.sbatch sweep.json)
merge=$(sbatch --parsable --dependency=afterok:"$array" --output=logs/merge.out \
        --wrap 'llmsim merge out/part-*.jsonl -o results.jsonl')
while squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do
  [ $SECONDS -lt $deadline ] || { echo "slurm-test: jobs still queued after ${timeout_s}s" >&2; squeue >&2; exit 1; }
  sleep 1
done
for f in logs/*; do echo "--- $f"; cat "$f"; done
[ "$(ls out/part-*.jsonl | wc -l)" -eq "$shards" ] || { echo "slurm-test: expected $shards shards" >&2; exit 1; }
cmp results.jsonl single.jsonl
echo "slurm-test: $rows rows from $shards array tasks and the dependent merge equal one process's run byte for byte"

# A merge that misses a shard fails (and writes nothing).
rm out/part-2.jsonl
if llmsim merge out/part-*.jsonl -o incomplete.jsonl 2>merge-missing.err; then
  echo "slurm-test: a merge without shard 2 succeeded" >&2
  exit 1
fi
[ ! -s incomplete.jsonl ] || { echo "slurm-test: a failed merge wrote incomplete.jsonl" >&2; exit 1; }
echo "slurm-test: a merge without shard 2 fails: $(head -n 1 merge-missing.err)"
echo "slurm-test: passed in ${SECONDS}s"
