/*
 * dump.h - nlmd --dump-state: print what a state directory holds.
 */
#ifndef NLMD_CMD_DUMP_H
#define NLMD_CMD_DUMP_H

#include <stdio.h>

struct config;

/*
 * Take the state directory's lock (refused while a daemon runs on it),
 * open and recover the store without starting an epoch, and print to `out'
 * one line per fact: the epoch, the token and host-id high-water marks,
 * every host, lock and share.  Returns 0, or -1 after printing why to
 * stderr.
 */
int	dump_state(const struct config *conf, FILE *out);

#endif
