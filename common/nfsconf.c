/*
 * nfsconf.c - see nfsconf.h.  Written from nfs.conf(5) and the behaviour
 * of nfs-utils 2.6 (Debian 12), which the FORMAT comment in nfsconf.h
 * restates.
 */
#include "nfsconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NFSCONF_DEPTH	10

struct nfsconf_rd {
	nfsconf_cb	*r_cb;
	void		*r_arg;
	char		*r_warn;
	size_t		 r_warnlen;
	char		*r_err;
	size_t		 r_errlen;
	enum cm_status	 r_status;	/* of the first failure */
};

static int	nfsconf_file(struct nfsconf_rd *, const char *path,
		    int optional, const char *section, int depth);

static void
nfsconf_warn(struct nfsconf_rd *r, const char *file, unsigned line,
    const char *what, const char *name, const char *why)
{
	size_t n;

	if (r->r_warn == NULL || r->r_warnlen == 0)
		return;
	n = strlen(r->r_warn);
	if (n < r->r_warnlen)
		snprintf(r->r_warn + n, r->r_warnlen - n, "%s:%u: %s %s: %s\n",
		    file, line, what, name, why);
}

static char *
nfsconf_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
	    e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* The value part of an assignment; NULL when a quote is not closed. */
static char *
nfsconf_value(char *v)
{
	char *e;

	v = nfsconf_trim(v);
	if (*v == '"' || *v == '\'') {
		if ((e = strchr(v + 1, *v)) == NULL)
			return NULL;
		*e = '\0';
		return v + 1;
	}
	v[strcspn(v, "#;")] = '\0';
	return nfsconf_trim(v);
}

/* "include = name": read it, relative to the directory of `file'. */
static int
nfsconf_include(struct nfsconf_rd *r, const char *file, unsigned line,
    const char *name, const char *section, int depth)
{
	char path[4096];
	const char *slash;
	int optional = 0, rc;

	if (*name == '-') {
		optional = 1;
		name++;
	}
	slash = strrchr(file, '/');
	if (name[0] == '/' || slash == NULL)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - file),
		    file, name);
	if (depth >= NFSCONF_DEPTH) {
		snprintf(r->r_err, r->r_errlen, "%s:%u: include %s: nested "
		    "over %d deep", file, line, path, NFSCONF_DEPTH);
		r->r_status = CM_INVALID;
		return -1;
	}
	rc = nfsconf_file(r, path, -1 - optional, section, depth + 1);
	if (rc == 1) {
		nfsconf_warn(r, file, line, "include", path, strerror(ENOENT));
		return 0;
	}
	return rc;
}

/* One logical line (continuations joined) of `file', first line `ln'. */
static int
nfsconf_line(struct nfsconf_rd *r, const char *file, unsigned ln,
    char *text, char *section, size_t seclen, int depth)
{
	char *s = nfsconf_trim(text), *eq, *key, *val;
	int quoted;

	if (*s == '\0' || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		char *e = strchr(s, ']');

		if (e == NULL) {
			/* Like nfs-utils: ignored until the next section. */
			int rc = r->r_cb(r->r_arg, file, ln, section, NULL, s,
			    r->r_err, r->r_errlen);

			snprintf(section, seclen, "%s", "[");
			return rc;
		}
		*e = '\0';
		snprintf(section, seclen, "%s", nfsconf_trim(s + 1));
		return 0;
	}
	if ((eq = strchr(s, '=')) == NULL)
		return r->r_cb(r->r_arg, file, ln, section, NULL, s, r->r_err,
		    r->r_errlen);
	*eq = '\0';
	key = nfsconf_trim(s);
	quoted = strchr("\"'", *nfsconf_trim(eq + 1)) != NULL &&
	    *nfsconf_trim(eq + 1) != '\0';
	if ((val = nfsconf_value(eq + 1)) == NULL || *key == '\0') {
		*eq = '=';
		return r->r_cb(r->r_arg, file, ln, section, NULL, s, r->r_err,
		    r->r_errlen);
	}
	/* "key =" is ignored; "key = \"\"" is handed on (see nfsconf.h). */
	if (*val == '\0' && (!quoted || strcasecmp(key, "include") == 0))
		return 0;
	if (strcasecmp(key, "include") == 0)
		return nfsconf_include(r, file, ln, val, section, depth);
	return r->r_cb(r->r_arg, file, ln, section, key, val, r->r_err,
	    r->r_errlen);
}

/*
 * Read `path' starting in `section0'.  `optional': 1 a missing file is
 * fine, 0 it is an error, -1/-2 (an include, not optional/optional): it
 * is reported by returning 1 (the caller warns) or quietly 0.
 */
static int
nfsconf_file(struct nfsconf_rd *r, const char *path, int optional,
    const char *section0, int depth)
{
	char section[NFSCONF_SECTION_MAX], *buf = NULL, *text = NULL;
	size_t cap = 0, len = 0;
	unsigned ln = 0, first = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT && optional != 0)
			return optional == -1 ? 1 : 0;
		r->r_status = cm_status_of_errno(errno);
		snprintf(r->r_err, r->r_errlen, "%s: %s", path,
		    strerror(errno));
		return -1;
	}
	snprintf(section, sizeof(section), "%s", section0);
	while (rc == 0 && (n = getline(&buf, &cap, f)) != -1) {
		char *grown;
		int more;

		ln++;
		if (len == 0)
			first = ln;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		/* A continuation: the backslash becomes a blank. */
		more = n > 0 && buf[n - 1] == '\\';
		if (more)
			buf[n - 1] = ' ';
		if ((grown = realloc(text, len + (size_t)n + 1)) == NULL) {
			snprintf(r->r_err, r->r_errlen, "%s: out of memory",
			    path);
			r->r_status = CM_NOMEM;
			rc = -1;
			break;
		}
		text = grown;
		memcpy(text + len, buf, (size_t)n + 1);
		len += (size_t)n;
		if (more)
			continue;
		rc = nfsconf_line(r, path, first, text, section,
		    sizeof(section), depth);
		len = 0;
	}
	if (rc == 0 && len > 0)
		rc = nfsconf_line(r, path, first, text, section,
		    sizeof(section), depth);
	if (rc == 0 && ferror(f)) {
		r->r_status = cm_status_of_errno(errno);
		snprintf(r->r_err, r->r_errlen, "%s: %s", path,
		    strerror(errno));
		rc = -1;
	}
	free(buf);
	free(text);
	fclose(f);
	return rc;
}

enum cm_status
nfsconf_read(const char *path, int optional, nfsconf_cb *cb, void *arg,
    char *warn, size_t warnlen, char *err, size_t errlen)
{
	/* A failure that set no status is the callback's: a bad value. */
	struct nfsconf_rd r = { cb, arg, warn, warnlen, err, errlen,
	    CM_INVALID };

	return nfsconf_file(&r, path, optional ? 1 : 0, "", 0) == 0 ? CM_OK :
	    r.r_status;
}
