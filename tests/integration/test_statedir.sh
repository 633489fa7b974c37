#!/bin/bash
# test_statedir.sh - what nlmd does when its state directory fails it.
#
#   bash tests/integration/test_statedir.sh                    (build/debug)
#   NLMD=$PWD/build/asan/nlmd BUILD=asan bash tests/integration/test_statedir.sh
#
# The state directory is on a small tmpfs (160 MiB: the region files take
# about 75 MiB of room at the default cache; this test's private mount
# namespace), the load comes from nlmbench (hold mode, locks left held).
#   1. A full file system at start: nlmd exits 1 saying "No space left on
#      device" -- not killed by SIGBUS (Berkeley DB's region files were
#      sparse, mapped, and touched after the open, when the file system
#      had no page left for them: exit status 135, no word in the log).
#      Tried with 0, 200 KiB and 2 MiB free.  The space given back, the
#      same store starts with every lock it held.
#   2. The file system filling while nlmd runs, under durability sync and
#      log: nlmd exits 1 within 20 s with "No space left on device" in its
#      log, and the state directory's name; started again while it is
#      still full, it exits 1 saying the file system is full (not that the
#      store is damaged); after space is freed it starts again on that
#      store.
#   3. A page of hosts.db overwritten with random bytes (the root of its
#      btree): nlmd exits 1 within 20 s naming hosts.db and README's
#      "When the store is damaged" (the load's btree search once looped
#      for ever there: nlmd never became ready nor said why).
#   4. A file of the store that the user nlmd runs as cannot write (the
#      directory otherwise that user's): refused by name, where Berkeley
#      DB's recovery said "PANIC: Permission denied ... run database
#      recovery".
# No sanitizer report in any log.  Exit status as lib.sh (77: skipped).

. "$(dirname "$0")/lib.sh"

B=${BUILD:-debug}
if [ -z "${ITEST_INSIDE:-}" ] && [ "$(id -u)" = 0 ] &&
    ! unshare --net --mount true 2>/dev/null; then
	echo "SKIP: cannot create network and mount namespaces"
	exit 77
fi
if [ -z "${ITEST_INSIDE:-}" ] &&
    ! make -s -C "$ITEST_TOP" BUILD="$B" "build/$B/nlmbench" >/dev/null; then
	echo "FATAL: cannot build nlmbench"
	exit 1
fi
itest_enter "$@"

W=$ITEST_WORK
M=$W/mnt
BENCH=$(itest_tool nlmbench "$ITEST_TOP/build/$B/nlmbench")
[ -x "$NLMD" ] || { echo "FATAL: $NLMD missing"; exit 1; }
mkdir -p "$M"
mount -t tmpfs -o size=160m,mode=0755 tmpfs "$M" ||
    { echo "SKIP: cannot mount a tmpfs"; exit 77; }
# Every nlmd gone before the tmpfs goes, and the tmpfs before lib.sh
# removes the work directory.
sd_cleanup() {
	local p
	for p in "${ITEST_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	umount "$M" 2>/dev/null
	itest_cleanup
}
trap sd_cleanup EXIT
LOGS=()

# run_nlmd DIR LOG [flags]: nlmd in the background; NPID
run_nlmd() {
	local d=$1 log=$2
	shift 2
	: >>"$log"
	"$NLMD" -F -s "$d" --no-rpcbind --nlm-port 4045 --nsm-port 4046 \
	    --control-socket= --grace-period=600 "$@" >>"$log" 2>&1 &
	NPID=$!
	ITEST_PIDS+=("$NPID")
	LOGS+=("$log")
}

# outcome LOG SECS: "ready", "exit N" (reaped) or "hang"; OUT.
outcome() {
	local end=$((SECONDS + $2))
	while [ $SECONDS -lt "$end" ]; do
		if grep -q "nlmd ready" "$1"; then
			OUT=ready
			return
		fi
		if ! itest_alive "$NPID"; then
			wait "$NPID" 2>/dev/null
			OUT="exit $?"
			itest_forget "$NPID"
			return
		fi
		sleep 0.05
	done
	OUT=hang
	kill -9 "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	itest_forget "$NPID"
}

# gone SECS: wait for nlmd to exit by itself; OUT as outcome's.
gone() {
	local end=$((SECONDS + $1))
	while itest_alive "$NPID"; do
		if [ $SECONDS -ge "$end" ]; then
			OUT="still running"
			return
		fi
		sleep 0.05
	done
	wait "$NPID" 2>/dev/null
	OUT="exit $?"
	itest_forget "$NPID"
}

stop() {
	kill "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
	itest_forget "$NPID"
}

# fill LEAVE_KIB: the tmpfs full but LEAVE_KIB.
fill() {
	rm -f "$M/fill"
	dd if=/dev/zero of="$M/fill" bs=64k 2>/dev/null
	[ "$1" -gt 0 ] && truncate -s "-$1K" "$M/fill"
	return 0
}

# loaded LOG: the lock count of its last "loaded ..." line.
loaded() {
	sed -n 's/.*loaded [0-9]* hosts, \([0-9]*\) locks.*/\1/p' "$1" | tail -1
}

# ---- a store with locks, made once -----------------------------------------

S0=$W/store0
mkdir -m 700 "$S0"
run_nlmd "$S0" "$W/make.log" --durability=log
outcome "$W/make.log" 20
[ "$OUT" = ready ] || { echo "FATAL: nlmd did not start"; cat "$W/make.log"; exit 1; }
"$BENCH" -p 4045 -m hold -K -c 4 -k 500 -t 0.1 >"$W/hold.out" 2>&1
stop
"$NLMD" --dump-state -s "$S0" >"$W/dump0" 2>&1
N0=$(grep -c '^lock ' "$W/dump0")
check "the store to damage holds 2,000 locks (--dump-state)" \
    test "$N0" = 2000

# ---- 1. a full file system at start ----------------------------------------

for free in 0 200 2048; do
	rm -rf "$M"/*
	cp -a "$S0" "$M/s"
	rm -f "$M"/s/__db.*
	fill "$free"
	L=$W/full-start-$free.log
	run_nlmd "$M/s" "$L"
	outcome "$L" 20
	rcheck "full at start ($free KiB free): exit 1 (got: $OUT)" \
	    test "$OUT" = "exit 1"
	rcheck "full at start ($free KiB free): the log says no space" \
	    grep -q "No space left on device" "$L"
	rm -f "$M/fill"
	L=$W/full-start-$free-after.log
	run_nlmd "$M/s" "$L"
	outcome "$L" 20
	rcheck "space freed: it starts with its $N0 locks" \
	    test "$OUT" = ready -a "$(loaded "$L")" = "$N0"
	stop
done

# ---- 2. the file system filling while nlmd runs ----------------------------

for dur in sync log; do
	rm -rf "$M"/*
	mkdir -m 700 "$M/s"
	L=$W/full-run-$dur.log
	run_nlmd "$M/s" "$L" --durability=$dur
	outcome "$L" 20
	check "full while running ($dur): started" test "$OUT" = ready
	fill 0
	"$BENCH" -p 4045 -m hold -K -c 4 -k 2000 -t 0.1 >"$W/full-$dur.out" 2>&1
	gone 20
	[ "$OUT" = "still running" ] && stop
	rcheck "full while running ($dur): exit 1 (got: $OUT)" \
	    test "$OUT" = "exit 1"
	rcheck "full while running ($dur): the log says no space" \
	    grep -q "No space left on device" "$L"
	rcheck "full while running ($dur): ... and names the directory" \
	    grep -q "No space left on device.*; state directory $M/s;" "$L"
	# Started again before any room is made: the start removes and
	# rebuilds the region files, and recovery's first write to the log
	# fails (Berkeley DB panics: DB_RUNRECOVERY).  That once read "a file
	# of the store is damaged or missing, and recovery cannot mend it".
	L=$W/full-run-$dur-again.log
	run_nlmd "$M/s" "$L" --durability=$dur
	outcome "$L" 20
	rcheck "still full ($dur): exit 1 (got: $OUT)" test "$OUT" = "exit 1"
	rcheck "still full ($dur): the log says the file system is full" \
	    grep -q "No space left on device.* -- the file system of $M/s is \
full.*the store is not damaged" "$L"
	rcheck "still full ($dur): ... not that the store is damaged" \
	    eval '! grep "a file of the store is damaged" "$L"'
	rm -f "$M/fill"
	L=$W/full-run-$dur-after.log
	run_nlmd "$M/s" "$L" --durability=$dur
	outcome "$L" 20
	check "space freed: it starts on that store ($dur)" test "$OUT" = ready
	stop
done

# ---- 3. a page of garbage ---------------------------------------------------

rm -rf "$M"/*
cp -a "$S0" "$M/s"
head -c 16384 /dev/urandom |
    dd of="$M/s/hosts.db" bs=16384 seek=1 conv=notrunc status=none
L=$W/garbage.log
run_nlmd "$M/s" "$L"
outcome "$L" 20
rcheck "hosts.db's root page of garbage: exit 1 (got: $OUT)" \
    test "$OUT" = "exit 1"
rcheck "hosts.db's root page of garbage: the log names the file" \
    grep -q "hosts.db.*When the store is damaged" "$L"

# ---- 4. a file the user cannot write ----------------------------------------

# nlmd run as that user from the start (User= under systemd): with
# --user it would open the store as root, before it drops privileges.
# A fresh copy of the store at $M/s, nobody's (no __db files).
nobody_store() {
	rm -rf "$M"/*
	cp -a "$S0" "$M/s"
	rm -f "$M"/s/__db.*
	chmod o+x "$W"
	chown -R nobody: "$M/s"
}

# nlmd on $M/s as nobody from the start (LOG), until ready or its exit.
start_as_nobody() {
	L=$1
	: >"$L"
	LOGS+=("$L")
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups \
	    "$NLMD" -F -s "$M/s" --no-rpcbind --nlm-port 4045 \
	    --nsm-port 4046 --control-socket= >>"$L" 2>&1 &
	NPID=$!
	ITEST_PIDS+=("$NPID")
	outcome "$L" 20
}

if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	nobody_store
	chown root "$M/s/locks.db"
	start_as_nobody "$W/unwritable.log"
	rcheck "locks.db not the user's: exit 1 (got: $OUT)" \
	    test "$OUT" = "exit 1"
	rcheck "locks.db not the user's: refused by name" \
	    grep -q "locks.db in .* cannot be read and written" "$L"
else
	check "user nobody and setpriv (util-linux) exist: the unwritable-file case needs them" false
fi

# ---- 5. root dumps a directory the user owns --------------------------------

# nlmd --dump-state as root (the README's example) on a store that nlmd,
# running as its user, owns: the dump opens the store as that user, so
# what the open creates (Berkeley DB's region files) stays the user's and
# the next start as the user opens it.  (It used to leave them root's,
# mode 0600: the start refused the store, exit 1, until a chown.)
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	nobody_store
	rcheck "root's nlmd --dump-state of nobody's store: exit 0" \
	    sh -c "'$NLMD' --dump-state -s '$M/s' >'$W/dump-root.txt'"
	rcheck "... lists the store (epoch line)" \
	    grep -q "^epoch [0-9]" "$W/dump-root.txt"
	rcheck "... every file still nobody's: $(find "$M/s" ! -user nobody |
	    tr '\n' ' ')" test -z "$(find "$M/s" ! -user nobody)"
	start_as_nobody "$W/after-dump.log"
	rcheck "... and nlmd, as nobody, starts on it (got: $OUT)" \
	    test "$OUT" = ready
	kill "$NPID" 2>/dev/null
	wait "$NPID" 2>/dev/null
else
	check "user nobody and setpriv (util-linux) exist: the dump-as-root case needs them" false
fi

check "no sanitizer report" itest_no_sanitizer "${LOGS[@]}"
itest_finish
