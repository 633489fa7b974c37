# model_vs_dump.awk - the store holds what crashdrv's clients were told.
#
#   awk -f tests/restart/model_vs_dump.awk DUMP MODEL
#
# DUMP is `nlmd --dump-state' output, MODEL a crashdrv model file (see
# crashdrv.h: "slot" and "share" lines, each with the states the clients
# may hold, a comma-separated list).  Prints every mismatch (a stored state
# the clients cannot hold, a stored record they never heard of) and a last
# line "N locks and M shares stored, K mismatches"; exit status 1 if K > 0.
# Used by tests/integration/test_restart.sh and test_powercut.sh.
function val(s) { return substr(s, index(s, "=") + 1) }
function ok(list, st,   n, a, i) {
	n = split(list, a, ",")
	for (i = 1; i <= n; i++)
		if (a[i] == st)
			return 1
	return 0
}
# (not FNR == 1: an empty dump would then make the model file 1)
{ file = FILENAME == ARGV[1] ? 1 : 2 }
file == 1 && $1 == "host" { name[val($2)] = val($3) }
file == 1 && $1 == "lock" {
	k = name[val($2)] " " val($3) " " val($4) " " val($5) " " \
	    val($6) " " val($7)
	lk[k] = val($8)
	nlk++
}
file == 1 && $1 == "share" {
	sh[name[val($2)] " " val($3) " " val($4)] = val($5) "/" val($6)
	nsh++
}
file == 2 && $1 == "slot" {
	k = $2 " " $3 " " $4 " " $5 " " $6 " " $7
	st = (k in lk) ? lk[k] : "none"
	if (!ok($8, st)) {
		print "slot " k ": stored " st ", clients told " $8
		bad++
	}
	delete lk[k]
}
file == 2 && $1 == "share" {
	k = $2 " " $3 " " $4
	st = (k in sh) ? sh[k] : "none"
	if (!ok($5, st)) {
		print "share " k ": stored " st ", clients told " $5
		bad++
	}
	delete sh[k]
}
END {
	for (k in lk) { print "stored, unknown to the clients: lock " \
	    k " " lk[k]; bad++ }
	for (k in sh) { print "stored, unknown to the clients: share " \
	    k " " sh[k]; bad++ }
	printf "%d locks and %d shares stored, %d mismatches\n", nlk,
	    nsh, bad
	exit bad > 0
}
