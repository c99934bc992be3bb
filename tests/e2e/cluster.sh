# Scale-out for real on this machine (docs/scale-out.md): a one-node Slurm cluster runs
# scripts/tune-slurm.sh's array and merge jobs, and GNU parallel runs
# scripts/tune-parallel.sh --sshlogin on two aliases of 127.0.0.1 through a private sshd;
# each merged file equals an unsharded tune on every key (scripts/tune-diff.sh). A copy of
# tune-slurm.sh without the merge job's dependency fails the same check: the test sees
# the order the dependency gives. Needs root, munge, slurmctld, slurmd and slurm-client
# (the Slurm part), openssh-server, openssh-client and rsync (the ssh part), GNU parallel
# and jq; a part whose packages are missing is skipped with a message (.ci/run installs
# them). Every daemon runs in the foreground of a background job, so its PID is known at
# once, and is stopped by that PID on every way out (the EXIT trap).
. tests/e2e/lib.sh
FAST="--device sim --iters 1 --warmup 0 --verify sample --top 2"
SHAPES=$TMP/small.json
cat >"$SHAPES" <<'EOF'
{"pairs": [
 {"src0": {"row": 1, "col": 512}, "src1": {"row": 512, "col": 1024}, "name": "up"},
 {"src0": {"row": 1, "col": 1024}, "src1": {"row": 1024, "col": 512}, "name": "down"},
 {"src0": {"row": 16, "col": 512}, "src1": {"row": 512, "col": 512}, "name": "q"},
 {"src0": {"row": 32, "col": 256}, "src1": {"row": 256, "col": 512}, "name": "k"}]}
EOF
case $RKNN_BENCH in /*) BIN=$RKNN_BENCH ;; *) BIN=$PWD/$RKNN_BENCH ;; esac

# ---- daemons: started in the background, stopped by PID ----
PIDS=
started() { PIDS="$PIDS $1"; }
teardown() {
	[ ! -f "$TMP/ssh/config" ] || stop_masters
	# Jobs of this cluster still queued or running go first (their slurmstepd too),
	# while the controller that would answer is alive.
	if [ -n "${CTLD_PID:-}" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
		timeout 10 scancel --quiet --user=root 2>/dev/null
	fi
	unset SLURM_CONF CTLD_PID
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do
		i=0 # up to 5 s each, then SIGKILL: a daemon must not outlive the test
		while kill -0 "$p" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	PIDS=
}
trap 'teardown; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds.
wait_for() {
	limit=$(($1 * 5))
	shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt "$limit" ] || return 1
		sleep 0.2
	done
}

have() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || return 1; done; }

# Ports of this run: another run at the same time picks others.
PORT=$((20000 + ($$ % 4000) * 3))
# The daemons that run as another user (munged) must reach their files under $TMP.
chmod 711 "$TMP"

# same_as_whole FILE LABEL: FILE equals the unsharded tune on every key.
same_as_whole() {
	if sh scripts/tune-diff.sh "$TMP/whole.json" "$1" >"$TMP/diff" 2>&1; then
		ok "$2: every key equals the unsharded tune"
	else
		not_ok "$2: every key equals the unsharded tune" "$(head -n 10 "$TMP/diff")"
	fi
}

if [ "${CHECK_SCOPE:-}" = quick ]; then
	# The scripts and daemons are the same under sanitizers and qemu: make check runs it.
	ok "cluster: skipped under CHECK_SCOPE=quick # SKIP the full make check runs it"
	echo "1..$n"
	exit 0
fi
if ! have jq parallel; then
	ok "cluster: jq or GNU parallel is missing # SKIP apt-get install jq parallel"
	echo "1..$n"
	exit 0
fi
expect_exit 0 "unsharded tune" -- "$BIN" --quiet tune "$SHAPES" $FAST -o "$TMP/whole.json"

# ---- Slurm: munged, slurmctld and slurmd of one node ----
start_munge() {
	mkdir -p "$TMP/munge"
	chown munge:munge "$TMP/munge" && chmod 755 "$TMP/munge" || return 1
	setpriv --reuid=munge --regid=munge --init-groups munged --foreground \
		--socket="$TMP/munge/socket" --pid-file="$TMP/munge/pid" \
		--log-file="$TMP/munge/log" --seed-file="$TMP/munge/seed" >"$TMP/munged.out" 2>&1 &
	started $!
	wait_for 10 sh -c "munge -S '$TMP/munge/socket' -n | unmunge -S '$TMP/munge/socket'"
}

# The configuration the issue found to work in a container without systemd or cgroups:
# no cgroup plugins, no accounting, no delay of batch jobs, one node of this machine's
# 2 CPUs, cores shared on request (--oversubscribe) so that a job need not wait for a
# free core to start.
write_slurm_conf() {
	host=$(hostname -s)
	mkdir -p "$TMP/slurm/state" "$TMP/slurm/spool"
	cat >"$TMP/slurm/slurm.conf" <<EOF
ClusterName=rbtest$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TMP/munge/socket
StateSaveLocation=$TMP/slurm/state
SlurmdSpoolDir=$TMP/slurm/spool
SlurmctldPidFile=$TMP/slurm/slurmctld.pid
SlurmdPidFile=$TMP/slurm/slurmd.pid
SlurmctldLogFile=$TMP/slurm/slurmctld.log
SlurmdLogFile=$TMP/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=rb Nodes=$host Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
EOF
	SLURM_CONF=$TMP/slurm/slurm.conf
}

node_idle() { sinfo -h -o %T | grep -q '^idle'; }
queue_empty() { [ -z "$(squeue -h -o %i)" ]; }
# exit_code JOB: Slurm's "ExitCode=N:S" of a finished job (kept for MinJobAge, 300 s).
exit_code() { scontrol show job "$1" | sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' | head -n 1; }

start_slurm() {
	start_munge || return 1
	write_slurm_conf
	export SLURM_CONF
	slurmctld -D -f "$SLURM_CONF" >"$TMP/slurm/ctld.out" 2>&1 &
	CTLD_PID=$!
	started $!
	slurmd -D -f "$SLURM_CONF" >"$TMP/slurm/d.out" 2>&1 &
	started $!
	wait_for 30 node_idle || return 1
	# The first batch job waits for the controller's first scheduling pass: a probe
	# job that must have ended before the timed work starts.
	probe=$(sbatch --parsable --output=/dev/null --wrap true) &&
		wait_for 30 queue_empty && [ "$(exit_code "$probe")" = 0:0 ]
}

# slurm_tune SCRIPT OUT: submits through SCRIPT, waits for every job; the job ids in
# $TMP/out.
slurm_tune() {
	expect_exit 0 "$1 submits the array and the merge job" -- \
		sh "$1" -n 2 --bin "$BIN" --sbatch "--oversubscribe" -o "$2" "$SHAPES" -- $FAST
	array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' "$TMP/out")
	merge=$(sed -n 's/^merge job \([0-9]*\) .*/\1/p' "$TMP/out")
	wait_for 90 queue_empty && ok "the jobs ended" || not_ok "the jobs ended" "$(squeue)"
}

slurm_part() {
	t0=$(date +%s)
	if ! start_slurm; then
		not_ok "a one-node Slurm cluster starts" "$(tail -n 5 "$TMP/munged.out" \
			"$TMP"/slurm/*.log 2>/dev/null)"
		return
	fi
	ok "a one-node Slurm cluster starts and runs a probe job ($(($(date +%s) - t0)) s)"
	t0=$(date +%s)
	slurm_tune scripts/tune-slurm.sh "$TMP/slurm.json"
	ok "tune-slurm.sh: 2 shards and the merge took $(($(date +%s) - t0)) s"
	[ "$(exit_code "${array}_1")/$(exit_code "${array}_2")/$(exit_code "$merge")" = 0:0/0:0/0:0 ] &&
		ok "both array tasks and the merge job exited 0" ||
		not_ok "every job exited 0" "$(cat "$TMP/slurm.json.shards"/*.log)"
	same_as_whole "$TMP/slurm.json" "Slurm's 2 shards merged"

	# Without the dependency the merge job starts beside the shards (a core is free to
	# share) and finds them missing: the check above must see that.
	sed 's/ --dependency="afterok:$array"//' scripts/tune-slurm.sh >"$TMP/no-dep.sh"
	if cmp -s scripts/tune-slurm.sh "$TMP/no-dep.sh"; then
		not_ok "the merge job's dependency found in tune-slurm.sh"
		return
	fi
	slurm_tune "$TMP/no-dep.sh" "$TMP/nodep.json"
	[ "$(exit_code "$merge")" != 0:0 ] && [ ! -e "$TMP/nodep.json" ] &&
		! sh scripts/tune-diff.sh "$TMP/whole.json" "$TMP/nodep.json" >/dev/null 2>&1 &&
		ok "without its dependency the merge job fails ($(exit_code "$merge")) and the check sees it" ||
		not_ok "without its dependency the merge fails" "merge $(exit_code "$merge")"
	grep -q "missing\|cannot" "$TMP/nodep.json.shards/merge.log" &&
		ok "the merge job's log says the shards were missing" ||
		not_ok "the merge log names the missing shards" "$(cat "$TMP/nodep.json.shards/merge.log")"
	teardown
}

if [ "$(id -u)" -ne 0 ]; then
	ok "Slurm and sshd parts need root # SKIP not root"
	echo "1..$n"
	exit 0
fi
if have munged munge unmunge slurmctld slurmd sbatch squeue sinfo scontrol scancel setpriv &&
	id munge >/dev/null 2>&1; then
	slurm_part
else
	ok "one-node Slurm cluster # SKIP apt-get install munge slurmctld slurmd slurm-client"
fi

# ---- GNU parallel over ssh: a private sshd on a high port, two aliases of it ----
start_sshd() {
	s=$TMP/ssh
	mkdir -p "$s" /run/sshd # sshd's privilege separation directory
	ssh-keygen -q -t ed25519 -N '' -f "$s/host_key" &&
		ssh-keygen -q -t ed25519 -N '' -f "$s/id" || return 1
	cp "$s/id.pub" "$s/authorized_keys"
	# StrictModes no: the keys lie under a temporary directory, not a home. SHLVL sent:
	# bash run by sshd reads ~/.bashrc only as a first-level shell, and this machine's
	# (a pyenv set-up) cost seconds per command, six commands per shard.
	cat >"$s/sshd_config" <<EOF
Port $((PORT + 2))
ListenAddress 127.0.0.1
HostKey $s/host_key
AuthorizedKeysFile $s/authorized_keys
PidFile $s/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv SHLVL
EOF
	cat >"$s/config" <<EOF
Host rb-board1 rb-board2
	HostName 127.0.0.1
	Port $((PORT + 2))
	User $(id -un)
	IdentityFile $s/id
	IdentitiesOnly yes
	BatchMode yes
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	LogLevel ERROR
	SetEnv SHLVL=1
	ControlMaster auto
	ControlPath $s/cm-%C
	ControlPersist 60
EOF
	/usr/sbin/sshd -D -f "$s/sshd_config" -E "$s/sshd.log" &
	started $!
	wait_for 10 ssh -F "$s/config" rb-board1 true
}

# The client's connection masters (ControlPersist: one per alias, reused by every ssh
# and rsync of the shards, a handshake each saved) end through their control sockets.
stop_masters() {
	for h in rb-board1 rb-board2; do ssh -F "$TMP/ssh/config" -O exit "$h" 2>/dev/null; done
}

# overlaps JOBLOG: the most shards one host ran at once (joblog: Host, Starttime, JobRuntime).
overlaps() {
	awk -F '\t' 'NR > 1 { printf "%s %.3f 1\n%s %.3f -1\n", $2, $3, $2, $3 + $4 }' "$1" |
		sort -k1,1 -k2,2n -k3,3n |
		awk '$1 != h { h = $1; c = 0 } { c += $3; if (c > most) most = c } END { print most + 0 }'
}

ssh_part() {
	t0=$(date +%s)
	if ! start_sshd; then
		not_ok "a private sshd starts" "$(tail -n 5 "$TMP/ssh/sshd.log")"
		return
	fi
	ok "a private sshd on port $((PORT + 2)) answers ($(($(date +%s) - t0)) s)"
	t0=$(date +%s)
	expect_exit 0 "tune-parallel.sh --sshlogin rb-board1,rb-board2" -- \
		env PARALLEL_SSH="ssh -F $TMP/ssh/config" sh scripts/tune-parallel.sh -n 4 \
		--sshlogin rb-board1,rb-board2 --bin "$BIN" -o "$TMP/ssh.json" "$SHAPES" -- $FAST
	ok "4 shards over ssh and the merge took $(($(date +%s) - t0)) s"
	log=$TMP/ssh.json.shards/joblog
	hosts=$(awk -F '\t' 'NR > 1 { print $2 }' "$log" | sort -u | tr '\n' ' ')
	[ "$hosts" = "rb-board1 rb-board2 " ] && ok "both hosts ran shards ($hosts)" ||
		not_ok "both hosts ran shards" "$(cat "$log")"
	most=$(overlaps "$log")
	[ "$most" = 1 ] && ok "one shard per host at a time (joblog)" ||
		not_ok "one shard per host at a time" "$most at once: $(cat "$log")"
	same_as_whole "$TMP/ssh.json" "4 shards over ssh merged"
	teardown
}

if have /usr/sbin/sshd ssh ssh-keygen rsync; then
	ssh_part
else
	ok "GNU parallel over ssh # SKIP apt-get install openssh-server openssh-client rsync"
fi
echo "1..$n"
