# single_node_slurm.sh — sourced (". single_node_slurm.sh"), not run: a real single-node Slurm cluster for the tests
# and benchmarks (tests/cluster/test_slurm.sh, benchmarks/bench_streamed_slurm.sh). The caller defines fail() and
# here (this folder), and calls:
#   slurm_up WORKDIR   checks it runs as root and finds Slurm's and munge's programs (PATH gains /usr/sbin), then
#                      munged (as the munge user, with a key it creates), slurmctld and slurmd (slurm.conf.in: this
#                      host with its CPUs and memory, private ports, state and logs in WORKDIR, which it empties);
#                      exports SLURM_CONF; stops the daemons by PID when the shell exits (trap), also on failure
#   wait_jobs ID[,ID...] [SECONDS]   until Slurm has none of them pending or running (fail after SECONDS, 300)
#   job_id array|merge FILE          the job ID `gradflow slurm --submit` printed into FILE
slurm_up() {
W=$1
PATH=$PATH:/usr/sbin:/sbin
export PATH
[ "$(id -u)" -eq 0 ] || fail "the test cluster runs its daemons as root (SlurmUser=root); run it as root (as .ci/run does)"
for p in munged munge slurmctld slurmd sbatch squeue scontrol sinfo runuser; do
  command -v $p >/dev/null || fail "$p not found; fix: apt-get install slurm-wlm munge (scripts/install-deps.sh)"
done
rm -rf "$W"
mkdir -p "$W/ctld" "$W/slurmd" "$W/munge" "$W/runs" || fail "cannot create $W"
ctld_pid=""
slurmd_pid=""
stop() {
  for p in $slurmd_pid $ctld_pid; do kill "$p" 2>/dev/null; done
  [ -s "$W/munge/munged.pid" ] && kill "$(cat "$W/munge/munged.pid")" 2>/dev/null
  for p in $slurmd_pid $ctld_pid; do wait "$p" 2>/dev/null; done
}
trap stop EXIT
trap 'exit 1' INT TERM

# --- munged, as the munge user, on a private socket with its own key --------------------------------------------
chown munge:munge "$W/munge" && chmod 700 "$W/munge" || fail "cannot give $W/munge to the munge user"
key="$W/munge/munge.key"
if [ ! -s "$key" ]; then
  dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null || fail "cannot create the munge key $key"
fi
chown munge:munge "$key" && chmod 400 "$key"
sock="$W/munge/munge.socket"
runuser -u munge -- munged --force --socket="$sock" --key-file="$key" --pid-file="$W/munge/munged.pid" \
  --log-file="$W/munge/munged.log" --seed-file="$W/munge/munged.seed" 2>"$W/munged.err" ||
  fail "munged did not start: $(cat "$W/munged.err") $(tail -n 3 "$W/munge/munged.log" 2>/dev/null)"
munge -n -S "$sock" | unmunge -S "$sock" >/dev/null 2>&1 ||
  fail "munged does not answer on $sock: $(tail -n 3 "$W/munge/munged.log" 2>/dev/null)"

# --- slurm.conf: this host, its CPUs and memory (slurmd -C), two free ports --------------------------------------
ports=$(/usr/bin/python3 -c "
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(('127.0.0.1', 0))
print(' '.join(str(x.getsockname()[1]) for x in s))")
set -- $ports
node=$(slurmd -C 2>/dev/null | head -n 1 | sed 's/ *$//')
host=$(echo "$node" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
cpus=$(echo "$node" | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
mem=$(echo "$node" | sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p')
[ -n "$host" ] && [ -n "$cpus" ] && [ -n "$mem" ] || fail "slurmd -C did not describe this node: '$node'"
conf="$W/slurm.conf"
sed -e "s|@HOST@|$host|g" -e "s|@CTLD_PORT@|$1|" -e "s|@SLURMD_PORT@|$2|" -e "s|@MUNGE_SOCKET@|$sock|" \
    -e "s|@STATE@|$W|g" -e "s|@CPUS@|$cpus|" -e "s|@MEM@|$mem|" "$here/slurm.conf.in" > "$conf"
SLURM_CONF=$conf
export SLURM_CONF

# --- slurmctld and slurmd (foreground, so that their PIDs are ours to stop) -----------------------------------------
slurmctld -D -c -f "$conf" >"$W/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$conf" >"$W/slurmd.out" 2>&1 &
slurmd_pid=$!
i=0
until [ "$(sinfo -h -o %t 2>/dev/null)" = "idle" ]; do
  for d in slurmctld slurmd; do
    pid=$ctld_pid
    [ $d = slurmd ] && pid=$slurmd_pid
    kill -0 "$pid" 2>/dev/null ||
      fail "$d exited: $(tail -n 3 "$W/$d.log" 2>/dev/null) $(tail -n 3 "$W/$d.out" 2>/dev/null)"
  done
  i=$((i + 1))
  [ $i -lt 120 ] || fail "the node is not idle after 60 s (sinfo: $(sinfo -h -o '%t %E' 2>&1)): slurmctld: \
$(tail -n 2 "$W/slurmctld.log" 2>/dev/null) slurmd: $(tail -n 2 "$W/slurmd.log" 2>/dev/null)"
  sleep 0.5
done
echo "cluster up: $node, ports $1/$2"

}

wait_jobs() {
  i=0
  limit=$((2 * ${2:-300}))
  while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
    i=$((i + 1))
    [ $i -lt $limit ] || fail "jobs $1 still queued after ${2:-300} s: $(squeue 2>&1)"
    sleep 0.5
  done
}
job_id() { sed -n "s/^$1 job \([0-9]*\)$/\1/p" "$2"; }
