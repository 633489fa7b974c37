/*
 * ct.h - suites of the common/ test binary (test-common).
 */
#ifndef NLMD_TESTS_COMMON_CT_H
#define NLMD_TESTS_COMMON_CT_H

/* Each returns 0, or -1 if CUnit could not add the suite. */
int	ct_register_ev(void);
int	ct_register_config(void);
int	ct_register_log(void);
int	ct_register_sdnotify(void);
int	ct_register_privdrop(void);
int	ct_register_nfsconf(void);
int	ct_register_netaddr(void);
int	ct_register_status(void);

#endif
