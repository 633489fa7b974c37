#!/bin/bash
# bench-compare.sh - nlmd side by side with NFS-Ganesha's own NLM and with
# a do-nothing RPC server (the floor), in one run (issue 12; make
# bench-compare).
#
#   tools/bench-compare.sh        (root: runs in private namespaces)
#
# In one private network + mount namespace (loopback only; its own
# rpcbind, /run and /var/lib/nfs), all three servers started side by side
# (each idle while another is measured), the points run one at a time:
#   echo     bench/echosrv: answers NULL with one receive and one send
#            per call (per wake-up), nothing else, and NLM4 LOCK and
#            UNLOCK the same way with a GRANTED that checks and keeps
#            nothing (the floor of a LOCK+UNLOCK: its transport and the
#            load generator's part, without any lock logic);
#   nlmd     the release build, durability log (BENCH_DURABILITY), with
#            its NSM; no rpcbind registration needed (fixed ports);
#   ganesha  NFS-Ganesha (FSAL MEM, Enable_NLM = true, NFSv3 only) with
#            nfs-utils' rpc.statd for its SM_MON calls.
# The load generator is nlmbench (AUTH_SYS on every call, as the Linux
# client sends).  Against Ganesha it mounts the export and CREATEs the
# files it locks, and sends their real NFSv3 handles (-E); nlmd takes them
# as opaque handles either way.
#
# Points: NULL, LOCK+UNLOCK (private files), contended (one range) and hold
# (N locks held in all on one file, the clients then lock and unlock
# beside them; at 16 and 64 clients) at 1, 16 and 64 clients, TCP and UDP.
# N is BENCH_HELD (100,000) for nlmd and BENCH_HELD_GANESHA (10,000) for
# Ganesha: its cost per lock grows with the locks on the file (16 clients
# took 3.5 s to take 10,000, 15 s for 20,000, 112 s for 40,000; 100,000
# did not finish in 5 minutes), so 100,000 would take the whole run.  Per point:
# calls/s (RPCs), p50/p99 of an op (a LOCK+UNLOCK pair is one op), server
# CPU per call from /proc (utime + stime over the window / RPCs) and its
# ratio to the echo server's per NULL call at the same transport and
# client count (and, last column, a LOCK+UNLOCK's to the echo server's
# LOCK+UNLOCK: what the lock logic and persistence cost above the floor),
# the load generator's CPU per call and its share of a core
# (at 90 % or more it, not the server, may be the limit: flagged "GEN"),
# and for hold the server's RSS per held lock (RSS with them held minus
# RSS just before) and the RSS after they were released.
#
# Each server's CPU while idle (2 s, nothing sent) is printed too: a server
# that spins when idle is charged for it in every point.
#
# Repetitions (BENCH_REPS, default 1): every point is run that many times,
# interleaved -- per transport and client count, each repetition runs
# every mode against every server (in an order that rotates), so that what
# the ratios compare was measured minutes, not seconds, apart only when
# the repetitions are.  One row per run is printed as it ends; the ratio
# table gives the median over the repetitions of each repetition's ratio
# (and, with more than one, the range), the markdown table (BENCH_MD) the
# run of median calls/s of each point.
#
# Environment: BENCH_SECS (seconds per point, default 2), BENCH_REPS
# (runs of each point, default 1), BENCH_CLIENTS
# (default "1 16 64"), BENCH_HELD, BENCH_HELD_GANESHA, BENCH_MEM_HELD
# (locks nlmd holds for the memory figure, default 1000000), BENCH_MEM_WAIT
# (seconds after their release of the last RSS sample, 15), BENCH_SERVERS
# (default "echo nlmd ganesha"), BENCH_NLMD_OPTS (more nlmd options, e.g.
# --store-cache-mib=16), BENCH_DURABILITY (default log), BENCH_MD
# (write the markdown table there too), BENCH_BUILD (default release; the
# integration test's smoke run uses asan).  Exit status 1 if any point
# counted an error or a server did not start.

set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BENCH_BUILD:-release}
O=$TOP/build/$BUILD
SECS=${BENCH_SECS:-2}
REPS=${BENCH_REPS:-1}
CLIENTS=${BENCH_CLIENTS:-1 16 64}
HELD_NLMD=${BENCH_HELD:-100000}
HELD_GANESHA=${BENCH_HELD_GANESHA:-10000}
MEM_NLMD=${BENCH_MEM_HELD:-1000000}
MEM_WAIT=${BENCH_MEM_WAIT:-15}
SERVERS=${BENCH_SERVERS:-echo nlmd ganesha}
DUR=${BENCH_DURABILITY:-log}
GANESHA_PLUGINS=/usr/lib/x86_64-linux-gnu/ganesha

if [ -z "${BENCH_INSIDE:-}" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "bench-compare.sh: needs root (network namespace)" >&2
		exit 77
	fi
	case " $SERVERS " in
	*" ganesha "*)
		for f in /usr/bin/ganesha.nfsd "$GANESHA_PLUGINS/libfsalmem.so" \
		    /usr/sbin/rpc.statd /usr/sbin/rpcbind; do
			[ -e "$f" ] || { echo "bench-compare.sh: $f missing;" \
			    "run make deps" >&2; exit 2; }
		done ;;
	esac
	make -s -C "$TOP" BUILD="$BUILD" all "build/$BUILD/nlmbench" \
	    "build/$BUILD/echosrv" >/dev/null || exit 2
	export BENCH_INSIDE=1
	exec unshare --net --mount --propagation private -- bash "$0" "$@"
fi

W=$(mktemp -d /var/tmp/nlmd-bench-compare.XXXXXX)
RUN=0
PIDS=()
FAILED=0
RES=$W/results
: >"$RES"

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ "$FAILED" = 0 ]; then rm -rf "$W"; else echo "kept: $W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip link set lo up
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/rpcbind /run/ganesha
mount -t tmpfs -o mode=755 tmpfs /var/lib/nfs
mkdir -p /var/lib/nfs/sm /var/lib/nfs/sm.bak /var/lib/nfs/ganesha
chown statd /var/lib/nfs/sm /var/lib/nfs/sm.bak 2>/dev/null
# No DNS from here: Ganesha and statd resolve this machine's name.
printf '127.0.0.1\tlocalhost %s\n' "$(hostname)" >"$W/hosts"
: >"$W/resolv.conf"
mount --bind "$W/hosts" /etc/hosts
mount --bind "$W/resolv.conf" /etc/resolv.conf
rpcbind -f -w &
PIDS+=("$!")

# cpu_s PID: utime + stime of PID in seconds
cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, "");
	    split($0, f, " "); printf "%.3f", (f[12] + f[13]) / hz }' \
	    "/proc/$1/stat"
}

rss_kib() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# PSS: shared pages counted once (until 2026-11-26 nlmd mapped Berkeley
# DB's region files twice, once per environment handle, and RSS counted
# its cache twice).
pss_kib() {
	awk '/^Pss:/ { print $2 }' "/proc/$1/smaps_rollup"
}

wait_for() {
	local i
	for i in $(seq 1 150); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

registered() {
	rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p="$1" -v n="$2" \
	    '$1 == p && $3 == n { f = 1 } END { exit !f }'
}

# start_server NAME: sets SRV_PID, PORT and NLMB (extra nlmbench flags)
start_server() {
	NLMB=(-A)
	HELD=$HELD_NLMD
	MEMHELD=$MEM_NLMD
	[ "$1" = ganesha ] && HELD=$HELD_GANESHA MEMHELD=$HELD_GANESHA
	case $1 in
	echo)
		"$O/echosrv" -p 4047 >"$W/echo.log" 2>&1 &
		SRV_PID=$!
		PORT=4047
		wait_for grep -q "echosrv ready" "$W/echo.log"
		;;
	nlmd)
		: >"$W/nlmd.conf"
		"$O/nlmd" -F -c "$W/nlmd.conf" -s "$W/nlmd-state$RUN" \
		    --nlm-port 4045 --nsm-port 4046 --no-rpcbind \
		    --durability="$DUR" --max-connections-per-address=512 \
		    ${BENCH_NLMD_OPTS:-} >"$W/nlmd.log" 2>&1 &
		SRV_PID=$!
		PORT=4045
		wait_for grep -q "nlmd ready" "$W/nlmd.log"
		;;
	ganesha)
		rpc.statd -F -L -p 4056 -o 4057 >"$W/statd.log" 2>&1 &
		PIDS+=("$!")
		STATD_PID=$!
		cat >"$W/ganesha.conf" <<-EOF
		NFS_CORE_PARAM {
			Protocols = 3;
			NFS_Port = 2049;
			MNT_Port = 4048;
			Enable_NLM = true;
			NLM_Port = 4055;
			Enable_RQUOTA = false;
			Plugins_Dir = "$GANESHA_PLUGINS";
		}
		NFSV4 { Graceless = true; }
		NFS_KRB5 { Active_krb5 = false; }
		EXPORT {
			Export_Id = 1;
			Path = "/bench";
			Pseudo = "/bench";
			Protocols = 3;
			Transports = TCP, UDP;
			Access_Type = RW;
			Squash = No_Root_Squash;
			SecType = sys;
			FSAL { Name = MEM; }
		}
		LOG { Default_Log_Level = EVENT; }
		EOF
		ganesha.nfsd -F -f "$W/ganesha.conf" -L "$W/ganesha.log" \
		    -p /run/ganesha/ganesha.pid -N NIV_EVENT \
		    >"$W/ganesha.out" 2>&1 &
		SRV_PID=$!
		PORT=4055
		NLMB+=(-E /bench)
		wait_for registered 100021 tcp && wait_for registered 100021 udp
		;;
	esac
	local rc=$?
	PIDS+=("$SRV_PID")
	if [ $rc != 0 ] || ! kill -0 "$SRV_PID" 2>/dev/null; then
		echo "FAILED: $1 did not start (logs in $W)"
		FAILED=1
		return 1
	fi
	return 0
}

stop_server() {
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	if [ "$1" = ganesha ]; then
		kill "$STATD_PID" 2>/dev/null
		wait "$STATD_PID" 2>/dev/null
	fi
}

field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | tr -d '%'
}

# point SERVER MODE PROTO CLIENTS REP: one nlmbench run, a line in $RES
point() {
	local srv=$1 mode=$2 proto=$3 c=$4 rep=$5 flags out rc
	read -r -a flags <<<"${SFLAGS[$srv]}"
	flags+=(-p "${SPORT[$srv]}" -P "${SPID[$srv]}" -t "$SECS" -m "$mode"
	    -c "$c")
	[ "$proto" = udp ] && flags+=(-u)
	[ "$mode" = hold ] && flags+=(-k $((${SHELD[$srv]} / c)))
	out=$("$O/nlmbench" "${flags[@]}" 2>"$W/err")
	rc=$?
	if [ $rc != 0 ] || [ -z "$out" ]; then
		echo "FAILED (exit $rc): nlmbench ${flags[*]}: $(head -3 "$W/err")"
		FAILED=1
	fi
	[ -n "$out" ] && echo "server=$srv rep=$rep $out" >>"$RES"
	[ -n "$out" ] && line "$(tail -1 "$RES")"
}

# memory SERVER: on a fresh server, 16 TCP clients take MEMHELD locks (and
# lock and unlock beside them for 1 s), then release them: RSS fresh, with
# them held, 1 s and BENCH_MEM_WAIT (15) s after the release; bytes per
# held lock.
memory() {
	local k=$((MEMHELD / 16)) r0 r1 r2 r3 p0 p1 p3 out
	r0=$(rss_kib "$SRV_PID")
	p0=$(pss_kib "$SRV_PID")
	out=$("$O/nlmbench" "${NLMB[@]}" -p "$PORT" -P "$SRV_PID" -t 1 \
	    -m hold -c 16 -k "$k" 2>"$W/err")
	if [ $? != 0 ]; then
		echo "FAILED: memory: $(head -3 "$W/err")"
		FAILED=1
		return
	fi
	r1=$(field srv_rss_kib "$out")
	p1=$(field srv_pss_kib "$out")
	sleep 1
	r2=$(rss_kib "$SRV_PID")
	sleep "$((MEM_WAIT - 1))"
	r3=$(rss_kib "$SRV_PID")
	p3=$(pss_kib "$SRV_PID")
	echo "# $1 memory: $((k * 16)) locks taken in $(field setup_s "$out") s" \
	    "($(field errors "$out") errors); RSS KiB fresh $r0, held $r1" \
	    "($(awk -v a="$r1" -v b="$r0" -v n=$((k * 16)) \
	    'BEGIN { printf "%.0f", (a - b) * 1024 / n }') bytes per lock)," \
	    "released +1 s $r2, +$MEM_WAIT s $r3; PSS KiB fresh $p0, held" \
	    "$p1 ($(awk -v a="$p1" -v b="$p0" -v n=$((k * 16)) \
	    'BEGIN { printf "%.0f", (a - b) * 1024 / n }') bytes per lock)," \
	    "released +$MEM_WAIT s $p3"
	# What nlmd says it handed back, and when (nlm_mem.c's trims).
	[ "$1" = nlmd ] && grep -h "memory:" "$W/nlmd.log" | sed 's/^/# nlmd: /'
}

# line RESULT: one row of the table (echo-relative columns filled later)
line() {
	local l=$1 srv mode proto c rpc cpu gen per gper
	srv=$(field server "$l"); mode=$(field mode "$l")
	[ "$mode" = hold ] && mode="hold/$(field held "$l")"
	proto=$(field proto "$l"); c=$(field clients "$l")
	rpc=$(field rpc_s "$l"); cpu=$(field srv_cpu "$l")
	gen=$(field gen_cpu "$l")
	per=$(awk -v c="$cpu" -v r="$rpc" 'BEGIN { if (r > 0)
	    printf "%.1f", c / 100 / r * 1e6; else print "-" }')
	gper=$(awk -v c="$gen" -v r="$rpc" 'BEGIN { if (r > 0)
	    printf "%.1f", c / 100 / r * 1e6; else print "-" }')
	printf "%-8s %-12s %-4s %4s %9s %7s %7s %8s %7s %6s %5s %s\n" \
	    "$srv" "$mode" "$proto" "$c" "$rpc" "$(field p50_us "$l")" \
	    "$(field p99_us "$l")" "$per" "$gper" "$gen" \
	    "$(field errors "$l")" "$([ "${gen:-0}" -ge 90 ] && echo GEN)"
}

echo "bench-compare: $(date -u +%FT%TZ), $(nproc) CPUs," \
    "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
    "kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "nlmd $(cd "$TOP" && git describe --always --dirty) (durability $DUR)," \
    "$(ganesha.nfsd -v 2>/dev/null | head -1 | tr -s ' ')," \
    "${SECS} s per point; hold: $HELD_NLMD locks (Ganesha $HELD_GANESHA)"
T0=$(date +%s)
printf "%-8s %-12s %-4s %4s %9s %7s %7s %8s %7s %6s %5s\n" server mode \
    proto clnt calls/s p50_us p99_us srv_us gen_us gen% errs
# All servers up first, each with what its points need.
declare -A SPID SPORT SFLAGS SHELD
LIVE=()
GANESHA_STATD=
for srv in $SERVERS; do
	start_server "$srv" || continue
	SPID[$srv]=$SRV_PID
	SPORT[$srv]=$PORT
	SFLAGS[$srv]="${NLMB[*]}"
	SHELD[$srv]=$HELD
	[ "$srv" = ganesha ] && GANESHA_STATD=$STATD_PID
	LIVE+=("$srv")
done
declare -A C0
for srv in "${LIVE[@]}"; do C0[$srv]=$(cpu_s "${SPID[$srv]}"); done
sleep 2
for srv in "${LIVE[@]}"; do
	echo "# $srv: pid ${SPID[$srv]}, idle CPU $(awk -v a="${C0[$srv]}" \
	    -v b="$(cpu_s "${SPID[$srv]}")" \
	    'BEGIN { printf "%.1f", (b - a) / 2 * 100 }') % of a core," \
	    "RSS $(rss_kib "${SPID[$srv]}") KiB"
done
# Per transport and client count, each repetition: every mode against
# every server, the servers' order rotating from one mode to the next.
turn=0
for proto in tcp udp; do
	for c in $CLIENTS; do
		for rep in $(seq 1 "$REPS"); do
			for mode in null lockunlock contended hold; do
				[ "$mode" = hold ] && [ "$c" -lt 16 ] && continue
				k=${#LIVE[@]}
				for ((i = 0; i < k; i++)); do
					srv=${LIVE[$(((i + turn) % k))]}
					[ "$srv" = echo ] && case $mode in
					    contended|hold) continue ;; esac
					point "$srv" "$mode" "$proto" "$c" "$rep"
				done
				turn=$((turn + 1))
			done
		done
	done
done
for srv in "${LIVE[@]}"; do
	SRV_PID=${SPID[$srv]}
	STATD_PID=$GANESHA_STATD
	stop_server "$srv"
done
# Memory on a fresh server (nlmd: a new state directory), one at a time,
# last: releasing a million locks keeps the store busy for a while.
for srv in "${LIVE[@]}"; do
	[ "$srv" = echo ] && continue
	RUN=$((RUN + 1))
	start_server "$srv" && { memory "$srv"; stop_server "$srv"; }
done

# ---- ratios -----------------------------------------------------------------
echo
echo "== per transport and client count: server CPU per call / echo's per NULL" \
    "call; LOCK+UNLOCK calls/s / the same server's NULL calls/s" \
    "$([ "$REPS" -gt 1 ] && echo "(medians of $REPS repetitions' ratios)")"
awk -v reps="$REPS" '
function f(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1)
	return substr($i, length(k) + 2); return "" }
# The median (or, w = "lo"/"hi", the least/greatest) of the ratio a/b over
# the repetitions in which both were measured; "-" when none.
function ratio(a, b, w,   r, v, n, i, j, t) {
	n = 0
	for (r = 1; r <= reps; r++)
		if ((a, r) in val && (b, r) in val && val[a, r] > 0 &&
		    val[b, r] > 0)
			v[++n] = val[a, r] / val[b, r]
	if (n == 0)
		return "-"
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	if (w == "lo") return sprintf("%.2f", v[1])
	if (w == "hi") return sprintf("%.2f", v[n])
	return sprintf("%.2f", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
function cell(a, b, w) {
	if (w == "range")
		return ratio(a, b, "lo") == "-" ? "-" : ratio(a, b, "lo") "-" ratio(a, b, "hi")
	return ratio(a, b, "")
}
{
	pc = f("proto") " " f("clients")
	k = f("server") " " f("mode") " " pc
	r = f("rep"); if (r == "") r = 1
	cpu = f("srv_cpu"); sub("%", "", cpu)
	val["rpc " k, r] = f("rpc_s")
	val["per " k, r] = f("rpc_s") > 0 ? cpu / 100 / f("rpc_s") * 1e6 : 0
	if (!(pc in seen)) { seen[pc] = 1; order[n++] = pc }
	if (!(f("server") in srvs)) { srvs[f("server")] = 1; sl[m++] = f("server") }
}
function table(w,   i, j, s, e, el, q) {
	printf "%-5s %4s %-8s %10s %10s %15s %12s %12s %14s\n", "proto", "clnt",
	    "server", "NULL/echo", "LOCK/echo", "contended/echo", "hold/echo",
	    "LU/NULL rate", "LOCK/echoLOCK"
	for (i = 0; i < n; i++) {
		split(order[i], q, " ")
		e = "per echo null " order[i]
		el = "per echo lockunlock " order[i]
		for (j = 0; j < m; j++) {
			s = sl[j]
			printf "%-5s %4s %-8s %10s %10s %15s %12s %12s %14s\n", q[1], q[2],
			    s, cell("per " s " null " order[i], e, w),
			    cell("per " s " lockunlock " order[i], e, w),
			    cell("per " s " contended " order[i], e, w),
			    cell("per " s " hold " order[i], e, w),
			    cell("rpc " s " lockunlock " order[i], "rpc " s " null " order[i], w),
			    cell("per " s " lockunlock " order[i], el, w)
		}
	}
}
END {
	table("")
	if (reps > 1) {
		print ""
		print "== the same, least-greatest over the repetitions"
		table("range")
	}
}' "$RES"

if [ -n "${BENCH_MD:-}" ]; then
	# Per point, the run of median calls/s (of an even number, the lower).
	awk '
	function f(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1)
		return substr($i, length(k) + 2); return "" }
	BEGIN { so["echo"] = 1; so["nlmd"] = 2; so["ganesha"] = 3
		mo["null"] = 1; mo["lockunlock"] = 2; mo["contended"] = 3; mo["hold"] = 4 }
	{ k = f("server") " " f("mode") " " f("proto") " " f("clients")
	  if (!(k in cnt)) ord[nk++] = k
	  ln[k, ++cnt[k]] = $0; rate[k, cnt[k]] = f("rpc_s") + 0 }
	END {
		for (x = 0; x < nk; x++) {
			k = ord[x]; c = cnt[k]
			for (i = 1; i <= c; i++) idx[i] = i
			for (i = 2; i <= c; i++)
				for (j = i; j > 1 && rate[k, idx[j - 1]] > rate[k, idx[j]]; j--) {
					t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t
				}
			$0 = ln[k, idx[int((c + 1) / 2)]]
			cpu = f("srv_cpu"); sub("%", "", cpu); gen = f("gen_cpu"); sub("%", "", gen)
			r = f("rpc_s")
			m = f("mode"); if (m == "hold") m = "hold " f("held")
			sc = (r > 0) ? cpu / 100 / r * 1e6 : 0
			gc = (r > 0) ? gen / 100 / r * 1e6 : 0
			flag = (gen + 0 >= 90) ? " (generator at " gen " %)" : ""
			printf "%d\t%d\t%s\t%d\t| %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f%s | %s |\n",
			    so[f("server")], mo[f("mode")], f("proto"), f("clients"),
			    f("server"), m, f("proto"), f("clients"), r, f("p50_us"),
			    f("p99_us"), sc, gc, flag, f("errors")
		}
	}' "$RES" | sort -t "$(printf '\t')" -k1,1n -k2,2n -k3,3 -k4,4n |
	    cut -f5- >"$W/md.rows"
	{
		echo "| server | mode | proto | clients | calls/s | p50 us | p99 us | server CPU us/call | generator CPU us/call | errors |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		cat "$W/md.rows"
	} >"$BENCH_MD"
	[ "$REPS" -gt 1 ] && echo >>"$BENCH_MD" && echo "Each row: the run" \
	    "of median calls/s of $REPS." >>"$BENCH_MD"
	echo "markdown table: $BENCH_MD"
fi
echo
echo "wall time $(($(date +%s) - T0)) s"
exit $FAILED
