/*
 * nsm.h - the status monitor (program 100024 version 1), in process.
 *
 * nlmd is the lock manager its NSM serves, so monitoring a client is not a
 * separate RPC: the NLM side knows its hosts.  What the NSM does here:
 *   - keeps our state number, derived from the store's epoch (odd while
 *     up, +2 at every start, never reset), and answers SM_STAT with it
 *     (stat_fail: it monitors for no one);
 *   - accepts SM_NOTIFY from rebooted clients and has the NLM release what
 *     they held, if the notification comes from the host's own address;
 *   - refuses every SM_MON (its own NLM needs none; monitoring for another
 *     program would be an RPC bounce: CA-99.05), and accepts SM_UNMON,
 *     SM_UNMON_ALL and SM_SIMU_CRASH only from a privileged port on this
 *     host.
 */
#ifndef NLMD_NSM_NSM_H
#define NLMD_NSM_NSM_H

#include <stddef.h>
#include <stdint.h>

#include "onc.h"

struct onc_srv;
struct store;

struct nsm_stats {
	uint64_t	calls[7];	/* by procedure */
	uint64_t	notify_released; /* SM_NOTIFY that released a host */
	uint64_t	notify_unknown;	/* SM_NOTIFY matching no host */
	uint64_t	notify_unchanged; /* a state we knew: ignored */
	uint64_t	refused;	/* not from a privileged local port */
};

/*
 * Begin a new epoch in `st' (store_epoch_begin(): committed and flushed)
 * and derive our state number from it; a "nsm-state" file that an earlier
 * nlmd left in `state_dir' is migrated (the epoch starts past it) and
 * removed.  `st' is borrowed for the life of the process (SM_SIMU_CRASH
 * stages a new epoch in it).  Stores the epoch in *epochp.  Returns 0, or
 * -1 with a reason in err[errlen].
 */
int	nsm_init(const char *state_dir, struct store *st, uint64_t *epochp,
	    char *err, size_t errlen);
/* Serve NSM version 1 on `srv'.  ONC_OK, or ONC_FULL (as nlm_register). */
enum onc_status nsm_register(struct onc_srv *srv);
/* Our current state number. */
int32_t	nsm_state(void);
const struct nsm_stats *nsm_get_stats(void);
/* The NSM's counters as Prometheus text. */
struct sbuf;
void	nsm_metrics(struct sbuf *);

#endif
