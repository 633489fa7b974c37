#!/bin/bash
# test_powercut.sh - what survives a power cut: nlmd runs in a qemu guest
# (TCG) on a virtio disk, clients lock and unlock from the host, and the
# guest's power is cut (kill -9 of qemu) in the middle of it.
#
#   bash tests/integration/test_powercut.sh                 (build/debug)
#   NLMD=build/asan/nlmd BUILD=asan bash tests/integration/test_powercut.sh
#   PC_CUTS=4 PC_LOAD_S=5 bash tests/integration/test_powercut.sh
#
# test_restart.sh kills nlmd; what the kernel holds for it (written, not
# flushed) survives that.  Here the kernel goes too.  The guest
# (tests/powercut/guest-init.sh) turns its kernel's write-back off, so
# that only what nlmd (Berkeley DB) flushed reaches the disk: a cut then
# loses everything a flush did not cover, the worst a real power loss can
# do.  Its network is a tap device in this test's namespace:
#
#   this namespace                           guest (qemu, 1 vCPU, TCG)
#   rpcbind, crashdrv: 16 NLM v4 clients     nlmd, durability sync,
#   + callback receiver                      state on /dev/vda (ext4)
#   10.79.0.1 (pctap0)      <-- tap -->      10.79.0.2
#
# Boots (durability sync, one disk image up to the control):
#   1          fresh store; crashdrv starts its load; the power is cut.
#   2s         a cut while nlmd starts (0.1-1 s after its exec: the
#              store being opened and recovered, or the grace period
#              being set up), then:
#   2 .. N     (PC_CUTS cuts, default 2) the guest prints `nlmd
#              --dump-state' before nlmd starts; checked: the store holds
#              what the clients were told (tests/restart/model_vs_dump.awk
#              against crashdrv's model written after the cut), the epoch
#              went up by one (or two, after 2s); then "up": crashdrv reclaims everything its
#              clients hold (reclaim-check strict: a reclaim not on record
#              is refused, see tests/restart/verify.c), grace ends early;
#              load, cut.
#   control    the last load of the run is under tests/powercut/nosync.c
#              (every fsync and fdatasync of nlmd's a no-op); the boot after
#              its cut must find the store behind what the clients were
#              told, and crashdrv's reclaims refused: the checks above can
#              fail.
#   log1, log2 durability log on a fresh disk, with only the event loop's
#              flushes let through (nosync.c's NOSYNC_EXCEPT_MAIN: not the
#              checkpoint thread's periodic ones); cut after PC_LOAD_S of
#              load: every client that had an answer has a host record
#              (its first record was flushed before it was answered), and
#              the locks of later turns are gone.  (Under the full shim no
#              host record survives: the check can fail.)
#
# Output: PASS/FAIL lines and "test_powercut: N passed, M failed".  Exit
# status 0, 1 on failure, 77 when skipped (not root, no qemu, no tap).
# Environment: NLMD (nlmd for the guest), BUILD (crashdrv's build),
# PC_CUTS, PC_LOAD_S (seconds of load before each cut, default 3),
# E2E_CACHE (the kernel cache shared with tests/e2e; default
# build/e2e/cache), PC_MEM (guest MiB, default 512), PC_CAPTURE=1 (the
# tap's traffic into tap.pcapng in the work directory), PC_DURABILITY
# (default sync; log shows what a cut takes from durability log: its
# checks then fail), PC_SEED (crashdrv's seed).

. "$(dirname "$0")/lib.sh"

BUILD=${BUILD:-debug}
HERE=$ITEST_TOP/tests/powercut
E2E_CACHE=${E2E_CACHE:-$ITEST_TOP/build/e2e/cache}
CUTS=${PC_CUTS:-2}
LOAD_S=${PC_LOAD_S:-3}
MEM=${PC_MEM:-512}
DUR=${PC_DURABILITY:-sync}

if [ -z "${ITEST_INSIDE:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, tap)"; exit 77; }
	missing=
	for c in qemu-system-x86_64:qemu-system-x86 mkfs.ext4:e2fsprogs \
	    cpio:cpio xz:xz-utils ip:iproute2 gcc:gcc modinfo:kmod \
	    readelf:binutils dpkg-deb:dpkg apt-get:apt rpcbind:rpcbind \
	    flock:util-linux; do
		command -v "${c%%:*}" >/dev/null 2>&1 || missing="$missing ${c#*:}"
	done
	if ! command -v busybox >/dev/null 2>&1 ||
	    ldd "$(command -v busybox)" >/dev/null 2>&1; then
		missing="$missing busybox-static"
	fi
	[ -z "$missing" ] ||
	    { echo "SKIP: missing packages:$missing (run 'make deps')"; exit 77; }
	[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
	[ -x "$NLMD" ] || { echo "FATAL: $NLMD missing"; exit 1; }
	if [ -z "${ITEST_NO_BUILD:-}" ]; then
		make -s -C "$ITEST_TOP" -f GNUmakefile -f tests/restart/module.mk \
		    BUILD="$BUILD" restart-itest-bins ||
		    { echo "FATAL: cannot build tests/restart"; exit 1; }
	fi
	# The kernel, before the namespace (a download the first time).  The
	# cache is shared with the e2e test and other runs.
	say() { echo "# $*"; }
	. "$ITEST_TOP/tests/e2e/vmlib.sh"
	mkdir -p "$E2E_CACHE" || exit 1
	exec 8>"$E2E_CACHE/.lock"
	flock -w 300 8 || { echo "FATAL: kernel cache locked"; exit 1; }
	vm_fetch_kernel || { echo "FATAL: no kernel for the guest"; exit 1; }
	exec 8>&-
	export E2E_CACHE
fi
itest_enter "$@"

W=$ITEST_WORK
DRV=${CRASHDRV:-$ITEST_TOP/build/$BUILD/tests/restart/crashdrv}
[ -x "$DRV" ] || { echo "FATAL: $DRV missing"; exit 1; }
TAP=pctap0
HOST_IP=10.79.0.1
GUEST_IP=10.79.0.2
NLM_PORT=4045
T0=$SECONDS

say() { echo "# [$((SECONDS - T0)) s] $*"; }

# ---- the guest's initramfs ---------------------------------------------------

. "$ITEST_TOP/tests/e2e/vmlib.sh"

# new_disk FILE: an empty ext4 file system in FILE.
new_disk() {
	rm -f "$1"
	truncate -s 256M "$1" && mkfs.ext4 -q -F -L nlmdstate "$1"
}

build_guest() {
	local r=$W/initramfs a
	KDIR=$E2E_CACHE/$E2E_KMETA
	vm_cached "$KDIR" || return 1
	vm_rootfs "$r" || return 1
	copy_dyn "$r" "$NLMD" /usr/sbin || return 1
	[ "$(basename "$NLMD")" = nlmd ] || mv "$r/usr/sbin/$(basename "$NLMD")" "$r/usr/sbin/nlmd"
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$r/usr/lib/nosync.so" \
	    "$HERE/nosync.c" || return 1
	vm_copy_modules "$r" powercut || return 1
	cp "$HERE/guest-init.sh" "$r/init"
	chmod 755 "$r/init"
	for a in netconfig rpc services protocols; do
		[ -e "/etc/$a" ] && cp "/etc/$a" "$r/etc/"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	printf '127.0.0.1\tlocalhost\n%s\tpchost\n%s\tpcguest\n' \
	    "$HOST_IP" "$GUEST_IP" >"$r/etc/hosts"
	printf 'passwd: files\ngroup: files\nhosts: files\n' >"$r/etc/nsswitch.conf"
	(cd "$r" && find . | cpio -o -H newc --quiet) >"$W/initrd.img" || return 1
	new_disk "$W/disk.img"
}

build_guest || { echo "FATAL: cannot build the guest"; exit 1; }
say "guest: $(cat "$KDIR/version"), initramfs $(($(stat -c %s "$W/initrd.img") / 1048576)) MiB, nlmd $NLMD"

# ---- network, rpcbind ----------------------------------------------------------

ip tuntap add dev $TAP mode tap || { echo "FATAL: ip tuntap"; exit 1; }
ip addr add $HOST_IP/24 dev $TAP
ip link set $TAP up
itest_start_rpcbind
if [ -n "${PC_CAPTURE:-}" ]; then
	dumpcap -q -i $TAP -w "$W/tap.pcapng" >"$W/dumpcap.log" 2>&1 &
	ITEST_PIDS+=($!)
fi

# ---- helpers ----------------------------------------------------------------

QPID=
CON=

# boot N [nosync|loopsync [ERE]]: start the guest on $DISK (durability
# $DUR) and wait for a console line matching ERE (default: nlmd ready);
# console $W/console.N.  nosync: nlmd's flushes are no-ops; loopsync:
# all but its event loop's (tests/powercut/nosync.c).
DISK=$W/disk.img
boot() {
	local append re=${3:-nlmd ready}
	CON=$W/console.$1
	: >"$CON"
	append="console=ttyS0 quiet panic=-1 pc.ip=$GUEST_IP/24 pc.dur=$DUR"
	case ${2:-} in
	nosync) append="$append pc.nosync=1" ;;
	loopsync) append="$append pc.nosync=2" ;;
	esac
	# shellcheck disable=SC2054 # commas are part of qemu's arguments
	qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$MEM" -smp 1 \
	    -nodefaults -no-user-config -display none -no-reboot \
	    -monitor none -kernel "$KDIR/kernel" -initrd "$W/initrd.img" \
	    -append "$append" -serial "file:$CON" \
	    -drive "file=$DISK,format=raw,if=virtio,cache=writeback" \
	    -netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
	    -device "virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:79:00:02" \
	    >"$W/qemu.$1.log" 2>&1 &
	QPID=$!
	ITEST_PIDS+=("$QPID")
	if ! itest_wait_lines "$CON" "$re" 0 180 "$QPID"; then
		say "boot $1: no \"$re\"; console:"
		tr -d '\r' <"$CON" | tail -20 | sed 's/^/    /'
		return 1
	fi
	[ "$re" = "nlmd ready" ] || return 0
	say "boot $1${2:+ ($2)}: $(tr -d '\r' <"$CON" |
	    grep -a "nlmd ready" | sed 's/.*nlmd ready/nlmd ready/')"
}

# power_cut: the power goes (the guest's kernel and page cache with it).
power_cut() {
	kill -9 "$QPID"
	wait "$QPID" 2>/dev/null
	itest_forget "$QPID"
	QPID=
}

# The dump the guest printed at boot $1.
dump_of() {
	tr -d '\r' <"$W/console.$1" |
	    sed -n '/^PC: DUMP BEGIN/,/^PC: DUMP END/p' | grep -av '^PC: '
}

drv_send() { echo "$1" >&9; }

# loss_report MISMATCHES: after the first cut, how far back what the store
# lost reaches (for PC_DURABILITY=log; later cuts would count the earlier
# losses again).  MISMATCHES is model_vs_dump.awk's output; the clients'
# logs say when each reply came (ms since crashdrv began), and the cut is
# taken as the last reply before the first reclaim.
loss_report() {
	awk '
	{ file = FILENAME == ARGV[1] ? 1 : 2 }
	file == 2 && FNR == 1 { fn = FILENAME; sub(/.*client-/, "", fn);
	    sub(/\.log$/, "", fn); cl = fn + 0; gone = 0 }
	file == 1 && $1 == "slot" {
		c = $2; sub(/.*-/, "", c); lost[c + 0 " " int($6 / 100)] = 1
		next
	}
	file == 2 && !gone {
		if ($0 ~ / reclaim /) { gone = 1; next }
		if ($0 ~ /no reply$/) next
		t = $1 + 0
		if (t > cut) cut = t
		if (match($0, /slot=[0-9]+/))
			last[cl " " substr($0, RSTART + 5, RLENGTH - 5) + 0] = t
	}
	END {
		for (k in lost) {
			if (!(k in last)) continue
			a = cut - last[k]; n++
			if (n == 1 || a < lo) lo = a
			if (a > hi) hi = a
		}
		if (n) printf "%d slots whose last change was lost, answered %d-%d ms before the cut\n", n, lo, hi
		else print "no slot lost its last change"
	}' "$1" "$W"/drv/client-*.log
}

# The crashdrv lines after line $1 of its output.
drv_since() { tail -n +$(($1 + 1)) "$DOUT"; }

# start_drv DIR [ARG...]: crashdrv, its files in DIR, its commands from a
# new FIFO on fd 9 (drv_send); sets DOUT and DRV_PID; 1 if it did not
# begin its load.
start_drv() {
	local dir=$1
	shift
	exec 9>&-
	DOUT=$dir/out
	mkdir -p "$dir"
	rm -f "$W/drv.fifo"
	mkfifo "$W/drv.fifo"
	exec 9<>"$W/drv.fifo"
	env ASAN_OPTIONS=detect_leaks=0 "$DRV" --srv $GUEST_IP \
	    --cli $HOST_IP --port $NLM_PORT --dir "$dir" --timeout-ms 3000 \
	    ${PC_SEED:+--seed $PC_SEED} "$@" \
	    <"$W/drv.fifo" >"$DOUT" 2>"$dir/err" 9>&- &
	DRV_PID=$!
	ITEST_PIDS+=("$DRV_PID")
	itest_wait_lines "$DOUT" '^ok start' 0 30 "$DRV_PID"
}

# ---- the run -----------------------------------------------------------------

trap 'exec 9>&-; itest_cleanup' EXIT

# The control boot is the last one with a load: boot CUTS+1.
NBOOT=$((CUTS + 2))
prev_epoch=
for b in $(seq 1 "$NBOOT"); do
	mode=
	[ "$b" = $((CUTS + 1)) ] && mode=nosync
	if [ "$b" = 2 ]; then
		# Cut once more while nlmd starts (opens and recovers the
		# store, bumps the epoch, loads): the boot after must find the
		# same store.
		boot 2s "" '^PC: START' || { check "boot 2s: nlmd started" false; break; }
		t=$((RANDOM % 10 + 1))
		sleep "$((t / 10)).$((t % 10))"
		power_cut
		last=$(tr -d '\r' <"$W/console.2s" | grep -a ' nlmd: ' | tail -1 |
		    sed 's/^[0-9:.]* nlmd: //' | cut -c1-60)
		[ -n "$last" ] && last="after \"$last\"" || last="before its first log line"
		say "boot 2s: power cut $((t * 100)) ms after nlmd's exec ($last)"
	fi
	boot "$b" $mode || { check "boot $b: nlmd ready" false; break; }
	if [ "$b" = 1 ]; then
		start_drv "$W/drv" --first-ms 60000 ||
		    { check "crashdrv started" false; break; }
	else
		dump_of "$b" >"$W/dump.$b"
		rcheck "boot $b: nlmd --dump-state read the store" \
		    grep -aq '^PC: DUMP END rc=0' "$CON"
		epoch=$(sed -n 's/^epoch //p' "$W/dump.$b")
		model=$W/drv/model.$((b - 1))
		mark=$(wc -l <"$DOUT")
		drv_send up
		itest_wait_lines "$DOUT" '^ok up$' $((b - 2)) 180 "$DRV_PID" ||
		    say "crashdrv did not finish up"
		drv_since "$mark" | grep -E '^(PASS|FAIL):' >"$W/verify.$b"
		nfail=$(grep -c '^FAIL' "$W/verify.$b")
		npass=$(grep -c '^PASS' "$W/verify.$b")
		if [ "$b" = "$NBOOT" ]; then
			# After the cut of the run without flushes.
			# shellcheck disable=SC2016 # sh -c's own arguments
			# A count of mismatches, not just a failed awk (a
			# missing file failed it too).
			rcheck "control, cut $((b - 1)) without flushes: the store is behind what the clients were told" \
			    sh -c 'awk -f "$0" "$1" "$2" | tail -1 |
			        grep -qE ", [1-9][0-9]* mismatches$"' \
			    "$ITEST_TOP/tests/restart/model_vs_dump.awk" \
			    "$W/dump.$b" "$model"
			rcheck "control: crashdrv's reclaims found it ($nfail of $((npass + nfail)) checks failed)" \
			    test "$nfail" -gt 0
		else
			awk -f "$ITEST_TOP/tests/restart/model_vs_dump.awk" \
			    "$W/dump.$b" "$model" >"$W/mismatch.$b"
			mm=$?
			rcheck "cut $((b - 1)): the store holds what the clients were told" \
			    sh -c "cat '$W/mismatch.$b'; exit $mm"
			[ "$b" = 2 ] && [ "$DUR" != sync ] &&
			    say "durability $DUR, cut 1: $(loss_report "$W/mismatch.$b")"
			# After boot 2s the epoch it took may be stored, or not.
			rcheck "cut $((b - 1)): stored epoch $epoch, the last start's (${prev_epoch:-none} before it)" \
			    sh -c "[ $epoch = $((${prev_epoch:-0} + 1)) ] ||
			    { [ $b = 2 ] && [ $epoch = $((${prev_epoch:-0} + 2)) ]; }"
			rcheck "cut $((b - 1)): every lock and share reclaimed ($npass checks passed, $nfail failed)" \
			    sh -c "[ $nfail = 0 ] && [ $npass -gt 0 ]"
			[ "$nfail" = 0 ] || sed 's/^/    /' "$W/verify.$b" |
			    grep FAIL | head -5
			itest_wait_lines "$CON" 'grace period over' 0 20 "$QPID"
			rcheck "cut $((b - 1)): grace over, nothing left to reclaim" \
			    grep -aq 'grace period over (nothing left to reclaim)' "$CON"
		fi
		prev_epoch=$epoch
	fi
	[ "$b" = "$NBOOT" ] && break
	sleep "$LOAD_S"
	grep -aq '^PC: EXIT' "$CON" && { check "boot $b: nlmd kept running" false; break; }
	power_cut
	n=$(itest_count "$DOUT" '^ok down$')
	drv_send down
	itest_wait_lines "$DOUT" '^ok down$' "$n" 60 "$DRV_PID" ||
	    { check "crashdrv answered down" false; break; }
	say "cut $b: $(grep -c . "$W/drv/model.$b" 2>/dev/null) model lines"
done
drv_send quit
itest_wait_lines "$DOUT" '^crashdrv: ' 0 60 "$DRV_PID"
[ -n "$QPID" ] && power_cut
say "$(grep '^crashdrv: ' "$DOUT") (the control's failures among them)"

# ---- durability log: a client host's first record ---------------------------
#
# Under durability log nothing but the checkpoint thread's periodic sync
# flushes the log -- except that a turn that stores a client host's first
# record is flushed before anyone is answered, so that after any crash
# nlmd knows every client it must tell of its restart (SM_NOTIFY).  On a
# fresh disk, with the periodic syncs taken away (loopsync: only the event
# loop's flushes reach the disk), crashdrv's 16 clients load nlmd for
# PC_LOAD_S and the power is cut: the next boot must find a host record
# for every client that had an answer, while the locks of the later turns
# are gone (which shows the periodic flushes were indeed off).
if [ "$DUR" = sync ] && [ "$ITEST_FAIL" != 0 ]; then
	say "durability log part not run: the sync part failed"
elif [ "$DUR" = sync ]; then
	DUR=log
	DISK=$W/disk-log.img
	new_disk "$DISK"
	if boot log1 loopsync; then
		start_drv "$W/drv-log" || say "crashdrv did not start"
		sleep "$LOAD_S"
		power_cut
		drv_send down
		itest_wait_lines "$DOUT" '^ok down$' 0 60 "$DRV_PID" ||
		    say "crashdrv did not answer down"
		drv_send quit
		if boot log2; then
			dump_of log2 >"$W/dump.log2"
			# Clients with at least one answer, and the hosts stored.
			for f in "$W"/drv-log/client-*.log; do
				grep -qv 'no reply$' "$f" &&
				    echo "rst-client-$(basename "$f" .log | sed 's/^client-//')"
			done | sort >"$W/answered.log2"
			sed -n 's/^host id=[0-9]* name=\([^ ]*\) .*/\1/p' \
			    "$W/dump.log2" | sort >"$W/hosts.log2"
			# shellcheck disable=SC2016
			rcheck "durability log, cut with only the loop's flushes: a host record for each of the $(grep -c . "$W/answered.log2") clients answered ($(grep -c . "$W/hosts.log2") stored)" \
			    sh -c '[ -s "$0" ] && [ -z "$(comm -23 "$0" "$1")" ]' \
			    "$W/answered.log2" "$W/hosts.log2"
			awk -f "$ITEST_TOP/tests/restart/model_vs_dump.awk" \
			    "$W/dump.log2" "$W/drv-log/model.1" >"$W/mismatch.log2"
			# shellcheck disable=SC2016
			rcheck "durability log, the same cut: the later turns' locks were lost (the periodic flushes were off: $(tail -1 "$W/mismatch.log2"))" \
			    grep -qE ", [1-9][0-9]* mismatches$" "$W/mismatch.log2"
			power_cut
		else
			check "durability log: nlmd ready after the cut" false
		fi
	else
		check "durability log: nlmd ready on a fresh disk" false
	fi
fi
# shellcheck disable=SC2016
rcheck "no sanitizer report and no nlmd exit in the guests' consoles" \
    sh -c '! cat "$0"/console.* | tr -d "\r" |
    grep -aE "AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:|^PC: EXIT"' "$W"
itest_finish
