// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * webconfig.c - load the exporter-toolkit web configuration file (see webconfig.h).
 *
 * The YAML is read into a libyaml document and walked by hand with one table of keys per
 * mapping, so that every key the file holds is either understood or refused: a misspelt key
 * must stop the daemon at start (or keep the old settings on SIGHUP), never be ignored the
 * way a permissive parser would ignore it. Keys of the format that rtsnapd does not implement
 * (cipher_suites, client_allowed_sans, rate_limit, ...) are refused by name with the reason,
 * except where an empty value means "the default" (then it is accepted).
 *
 * Certificates and keys are read into memory here (libmicrohttpd takes PEM in memory) and
 * checked with GnuTLS: the key must match the certificate, the CA file must hold at least
 * one certificate. No I/O happens after webconfig_load() returns.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "rtsnap/webconfig.h"

#define WC_FILE_MAX (1024 * 1024) /* the file itself, and each PEM file it names */

struct ctx {
	yaml_document_t doc;
	const char *path;
	char dir[4096]; /* the file's directory, for relative names */
	char *err;
	size_t errlen;
};

static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Write "path:line:col: message" into c->err; returns -EINVAL. */
static int fail(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(c->err, c->errlen, "%s:%zu:%zu: %s", c->path, n->start_mark.line + 1,
			 n->start_mark.column + 1, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
	return -EINVAL;
}

/* Read a whole regular file (at most WC_FILE_MAX bytes) as a NUL-terminated string. */
static int read_file(const char *path, char **out, size_t *len)
{
	struct stat st;
	char *buf;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > WC_FILE_MAX) {
		int e = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;

		close(fd);
		return e;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A scalar value; "" for YAML null (key with no value). */
static int want_string(struct ctx *c, const char *key, const yaml_node_t *v, const char **out)
{
	const char *s = scalar(v);

	if (!s)
		return fail(c, v, "%s: expected a string", key);
	if (v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (strcmp(s, "~") == 0 || strcmp(s, "null") == 0))
		s = "";
	*out = s;
	return 0;
}

static int want_bool(struct ctx *c, const char *key, const yaml_node_t *v, int *out)
{
	const char *s = scalar(v);

	if (s && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0))
		*out = 1;
	else if (s &&
		 (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0))
		*out = 0;
	else
		return fail(c, v, "%s: expected true or false", key);
	return 0;
}

/* A value that may only be empty (null, "", [] or {}) because rtsnapd lacks the feature. */
static int want_empty(struct ctx *c, const char *key, const yaml_node_t *v, const char *why)
{
	const char *s = scalar(v);
	int empty = (s && (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0)) ||
		    (v->type == YAML_SEQUENCE_NODE &&
		     v->data.sequence.items.top == v->data.sequence.items.start) ||
		    (v->type == YAML_MAPPING_NODE &&
		     v->data.mapping.pairs.top == v->data.mapping.pairs.start);

	return empty ? 0 : fail(c, v, "%s is not supported by rtsnapd (%s)", key, why);
}

/* Iterate over a mapping: fn(key, value) for each pair; duplicate keys are refused. */
typedef int (*pair_fn)(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *kn,
		       yaml_node_t *vn);

static int each_pair(struct ctx *c, struct webconfig *wc, const char *where, yaml_node_t *map,
		     pair_fn fn)
{
	yaml_node_pair_t *p, *q;

	if (map->type == YAML_SCALAR_NODE && !*scalar(map))
		return 0; /* "key:" with nothing under it */
	if (map->type != YAML_MAPPING_NODE)
		return fail(c, map, "%s: expected a mapping", where);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(&c->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(&c->doc, p->value);
		const char *k = scalar(kn);
		int ret;

		if (!k || !vn)
			return fail(c, kn, "%s: keys must be strings", where);
		for (q = map->data.mapping.pairs.start; q < p; q++)
			if (strcmp(scalar(yaml_document_get_node(&c->doc, q->key)), k) == 0)
				return fail(c, kn, "%s: key '%s' given twice", where, k);
		ret = fn(c, wc, k, kn, vn);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- tls_server_config ---- */

struct tls_raw {
	const char *cert_file, *key_file, *ca_file, *cert, *key, *ca;
	const yaml_node_t *cert_n, *key_n, *ca_n, *tls_n;
	int min_v, max_v, server_order;
};

static struct tls_raw s_tls; /* main thread only, during one load */

static int tls_version(struct ctx *c, const char *key, const yaml_node_t *v, int *out)
{
	static const char *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
	const char *s = scalar(v);

	for (int i = 0; s && i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = 10 + i;
			return 0;
		}
	}
	return fail(c, v, "%s: '%s' is not one of TLS10, TLS11, TLS12, TLS13", key,
		    s ? s : "(not a string)");
}

static int tls_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		    yaml_node_t *v)
{
	static const struct {
		const char *name;
		enum webconfig_client_auth a;
	} auth[] = {
		{ "NoClientCert", WC_NO_CLIENT_CERT },
		{ "RequestClientCert", WC_REQUEST_CLIENT_CERT },
		{ "RequireAnyClientCert", WC_REQUIRE_ANY_CLIENT_CERT },
		{ "VerifyClientCertIfGiven", WC_VERIFY_CLIENT_CERT_IF_GIVEN },
		{ "RequireAndVerifyClientCert", WC_REQUIRE_AND_VERIFY_CLIENT_CERT },
	};
	const char *s;
	int ret;

	if (strcmp(k, "cert_file") == 0 || strcmp(k, "cert") == 0) {
		ret = want_string(c, k, v, &s);
		*(k[4] ? &s_tls.cert_file : &s_tls.cert) = s;
		s_tls.cert_n = v;
		return ret;
	}
	if (strcmp(k, "key_file") == 0 || strcmp(k, "key") == 0) {
		ret = want_string(c, k, v, &s);
		*(k[3] ? &s_tls.key_file : &s_tls.key) = s;
		s_tls.key_n = v;
		return ret;
	}
	if (strcmp(k, "client_ca_file") == 0 || strcmp(k, "client_ca") == 0) {
		ret = want_string(c, k, v, &s);
		*(k[9] ? &s_tls.ca_file : &s_tls.ca) = s;
		s_tls.ca_n = v;
		return ret;
	}
	if (strcmp(k, "client_auth_type") == 0) {
		ret = want_string(c, k, v, &s);
		if (ret)
			return ret;
		if (!*s)
			return 0;
		for (size_t i = 0; i < sizeof(auth) / sizeof(auth[0]); i++) {
			if (strcmp(s, auth[i].name) == 0) {
				wc->client_auth = auth[i].a;
				return 0;
			}
		}
		return fail(c, v,
			    "client_auth_type: '%s' is not one of NoClientCert, RequestClientCert, "
			    "RequireAnyClientCert, VerifyClientCertIfGiven, "
			    "RequireAndVerifyClientCert",
			    s);
	}
	if (strcmp(k, "min_version") == 0)
		return tls_version(c, k, v, &s_tls.min_v);
	if (strcmp(k, "max_version") == 0)
		return tls_version(c, k, v, &s_tls.max_v);
	if (strcmp(k, "prefer_server_cipher_suites") == 0)
		return want_bool(c, k, v, &s_tls.server_order);
	if (strcmp(k, "cipher_suites") == 0)
		return want_empty(c, k, v, "GnuTLS chooses the suites of the TLS versions allowed");
	if (strcmp(k, "curve_preferences") == 0)
		return want_empty(c, k, v, "GnuTLS chooses the groups");
	if (strcmp(k, "client_allowed_sans") == 0)
		return want_empty(c, k, v, "any certificate the client CA signed is accepted");
	return fail(c, kn, "unknown key '%s' in tls_server_config", k);
}

/* PEM from inline text or a file (relative to the configuration's directory). */
static int load_pem(struct ctx *c, const char *what, const char *inl, const char *file,
		    const yaml_node_t *n, char **out)
{
	char full[8192];
	int ret;

	if (inl && *inl) {
		if (file && *file)
			return fail(c, n, "both %s and %s_file given", what, what);
		*out = strdup(inl);
		return *out ? 0 : -ENOMEM;
	}
	if (file[0] == '/')
		snprintf(full, sizeof(full), "%s", file);
	else
		snprintf(full, sizeof(full), "%s/%s", c->dir, file);
	ret = read_file(full, out, NULL);
	if (ret)
		return fail(c, n, "%s_file: cannot read %s: %s", what, full, strerror(-ret));
	return 0;
}

static int check_tls(struct ctx *c, struct webconfig *wc)
{
	const struct tls_raw *t = &s_tls;
	int have_cert = (t->cert && *t->cert) || (t->cert_file && *t->cert_file);
	int have_key = (t->key && *t->key) || (t->key_file && *t->key_file);
	int have_ca = (t->ca && *t->ca) || (t->ca_file && *t->ca_file);
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_datum_t cd, kd;
	int ret, min_v = t->min_v ? t->min_v : 12, max_v = t->max_v ? t->max_v : 13;
	size_t o;

	if (!have_cert && !have_key) {
		if (have_ca || wc->client_auth != WC_NO_CLIENT_CERT)
			return fail(c, t->tls_n,
				    "tls_server_config: client certificates need cert_file and "
				    "key_file");
		return 0; /* like exporter-toolkit: no certificate, no TLS */
	}
	if (!have_cert)
		return fail(c, t->tls_n, "tls_server_config: key_file given without cert_file");
	if (!have_key)
		return fail(c, t->tls_n, "tls_server_config: cert_file given without key_file");
	ret = load_pem(c, "cert", t->cert, t->cert_file, t->cert_n, &wc->cert_pem);
	if (!ret)
		ret = load_pem(c, "key", t->key, t->key_file, t->key_n, &wc->key_pem);
	if (!ret && have_ca)
		ret = load_pem(c, "client_ca", t->ca, t->ca_file, t->ca_n, &wc->ca_pem);
	if (ret)
		return ret;
	if (wc->client_auth == WC_NO_CLIENT_CERT && wc->ca_pem)
		wc->client_auth = WC_REQUIRE_AND_VERIFY_CLIENT_CERT; /* as exporter-toolkit does */
	if (wc->client_auth != WC_NO_CLIENT_CERT && !wc->ca_pem)
		return fail(c, t->tls_n,
			    "client_auth_type %s needs client_ca_file in rtsnapd (libmicrohttpd "
			    "only asks for a client certificate when it has a CA to name)",
			    webconfig_client_auth_name(wc->client_auth));
	if (min_v > max_v)
		return fail(c, t->tls_n, "min_version TLS%d is above max_version TLS%d", min_v,
			    max_v);
	o = (size_t)snprintf(wc->priorities, sizeof(wc->priorities), "NORMAL:-VERS-ALL");
	for (int v = max_v; v >= min_v; v--)
		o += (size_t)snprintf(wc->priorities + o, sizeof(wc->priorities) - o,
				      ":+VERS-TLS1.%d", v - 10);
	if (t->server_order)
		snprintf(wc->priorities + o, sizeof(wc->priorities) - o, ":%%SERVER_PRECEDENCE");

	/* the key must match the certificate; the CA file must hold certificates */
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return -ENOMEM;
	cd.data = (unsigned char *)wc->cert_pem;
	cd.size = (unsigned int)strlen(wc->cert_pem);
	kd.data = (unsigned char *)wc->key_pem;
	kd.size = (unsigned int)strlen(wc->key_pem);
	ret = gnutls_certificate_set_x509_key_mem2(cred, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (ret < 0) {
		gnutls_certificate_free_credentials(cred);
		return fail(
		    c, t->cert_n, "the certificate (%s) and key (%s) cannot be used together: %s",
		    t->cert_file && *t->cert_file ? t->cert_file : "inline",
		    t->key_file && *t->key_file ? t->key_file : "inline", gnutls_strerror(ret));
	}
	if (wc->ca_pem) {
		cd.data = (unsigned char *)wc->ca_pem;
		cd.size = (unsigned int)strlen(wc->ca_pem);
		ret = gnutls_certificate_set_x509_trust_mem(cred, &cd, GNUTLS_X509_FMT_PEM);
		if (ret <= 0) {
			gnutls_certificate_free_credentials(cred);
			return fail(c, t->ca_n, "client CA (%s): no certificate in it%s%s",
				    t->ca_file && *t->ca_file ? t->ca_file : "inline",
				    ret < 0 ? ": " : "", ret < 0 ? gnutls_strerror(ret) : "");
		}
	}
	gnutls_certificate_free_credentials(cred);
	{
		const char *pos = NULL;
		gnutls_priority_t prio;

		ret = gnutls_priority_init(&prio, wc->priorities, &pos);
		if (ret < 0)
			return fail(c, t->tls_n, "TLS versions: GnuTLS refuses '%s': %s",
				    wc->priorities, gnutls_strerror(ret));
		gnutls_priority_deinit(prio);
	}
	wc->tls = 1;
	return 0;
}

/* ---- http_server_config ---- */

static int http_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		     yaml_node_t *v);

static int header_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		       yaml_node_t *v)
{
	static const char *const allowed[] = { "Content-Security-Policy", "X-Frame-Options",
					       "X-Content-Type-Options", "X-XSS-Protection",
					       "Strict-Transport-Security" };
	const char *s;
	size_t n = 0;
	char **h;
	int ok = 0, ret;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		ok |= strcasecmp(k, allowed[i]) == 0;
	if (!ok)
		return fail(c, kn,
			    "http_server_config.headers: '%s' is not one of Content-Security-"
			    "Policy, X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
			    "Strict-Transport-Security",
			    k);
	ret = want_string(c, k, v, &s);
	if (ret)
		return ret;
	if (!*s || strpbrk(s, "\r\n"))
		return fail(c, v, "headers.%s: the value must be one non-empty line", k);
	while (wc->headers && wc->headers[n])
		n++;
	h = realloc(wc->headers, (n + 3) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	wc->headers = h;
	h[n] = strdup(k);
	h[n + 1] = strdup(s);
	h[n + 2] = NULL;
	return h[n] && h[n + 1] ? 0 : -ENOMEM;
}

static int http_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		     yaml_node_t *v)
{
	int b;

	if (strcmp(k, "http2") == 0)
		return want_bool(c, k, v, &b); /* rtsnapd speaks HTTP/1.1 either way */
	if (strcmp(k, "headers") == 0)
		return each_pair(c, wc, "http_server_config.headers", v, header_pair);
	return fail(c, kn, "unknown key '%s' in http_server_config", k);
}

/* ---- basic_auth_users ---- */

static int user_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		     yaml_node_t *v)
{
	struct webconfig_user *u;
	const char *h;
	int ret = want_string(c, k, v, &h);

	if (ret)
		return ret;
	if (!*k || strchr(k, ':'))
		return fail(c, kn, "basic_auth_users: '%s' cannot be a user name (empty or ':')",
			    k);
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    crypt_checksalt(h) != CRYPT_SALT_OK)
		return fail(c, v,
			    "basic_auth_users: the hash of '%s' is not a bcrypt hash ($2y$..., "
			    "e.g. from htpasswd -nBC 10 \"\" | tr -d ':\\n')",
			    k);
	u = realloc(wc->users, (wc->nusers + 1) * sizeof(*u));
	if (!u)
		return -ENOMEM;
	wc->users = u;
	u = &wc->users[wc->nusers];
	memset(u, 0, sizeof(*u));
	u->name = strdup(k);
	u->hash = strdup(h);
	wc->nusers++;
	return u->name && u->hash ? 0 : -ENOMEM;
}

/* ---- top level ---- */

static int top_pair(struct ctx *c, struct webconfig *wc, const char *k, yaml_node_t *kn,
		    yaml_node_t *v)
{
	if (strcmp(k, "tls_server_config") == 0) {
		s_tls.tls_n = kn;
		return each_pair(c, wc, k, v, tls_pair);
	}
	if (strcmp(k, "http_server_config") == 0)
		return each_pair(c, wc, k, v, http_pair);
	if (strcmp(k, "basic_auth_users") == 0)
		return each_pair(c, wc, k, v, user_pair);
	if (strcmp(k, "rate_limit") == 0)
		return want_empty(c, k, v, "use --max-connections and --max-pending");
	return fail(c, kn,
		    "unknown key '%s' (known: tls_server_config, http_server_config, "
		    "basic_auth_users)",
		    k);
}

const char *webconfig_client_auth_name(enum webconfig_client_auth a)
{
	static const char *const n[] = { "NoClientCert", "RequestClientCert",
					 "RequireAnyClientCert", "VerifyClientCertIfGiven",
					 "RequireAndVerifyClientCert" };

	return (unsigned int)a < 5 ? n[a] : "?";
}

int webconfig_load(const char *path, struct webconfig **out, char *err, size_t errlen)
{
	struct ctx c = { .path = path, .err = err, .errlen = errlen };
	struct webconfig *wc = calloc(1, sizeof(*wc));
	yaml_parser_t parser;
	yaml_node_t *root;
	char *text = NULL, *slash;
	size_t len;
	int ret, have_doc = 0;

	memset(&s_tls, 0, sizeof(s_tls));
	err[0] = 0;
	if (!wc)
		return -ENOMEM;
	wc->path = strdup(path);
	ret = read_file(path, &text, &len);
	if (ret) {
		fail(&c, NULL, "cannot read the web configuration: %s", strerror(-ret));
		goto out;
	}
	snprintf(c.dir, sizeof(c.dir), "%s", path);
	slash = strrchr(c.dir, '/');
	if (slash)
		slash == c.dir ? (void)(slash[1] = 0) : (void)(*slash = 0);
	else
		strcpy(c.dir, ".");
	if (!yaml_parser_initialize(&parser)) {
		ret = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &c.doc)) {
		snprintf(err, errlen, "%s:%zu:%zu: YAML: %s", path, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "cannot parse");
		yaml_parser_delete(&parser);
		ret = -EINVAL;
		goto out;
	}
	yaml_parser_delete(&parser);
	have_doc = 1;
	root = yaml_document_get_root_node(&c.doc);
	if (root) { /* an empty file: no TLS, no users */
		ret = each_pair(&c, wc, "the top level", root, top_pair);
		if (!ret)
			ret = check_tls(&c, wc);
	}
	if (!ret && wc->nusers) {
		/* unknown users are checked against a setting of the first user's cost */
		char prefix[8] = "$2b$";
		unsigned long cost = strtoul(wc->users[0].hash + 4, NULL, 10);

		if (!crypt_gensalt_rn(prefix, cost, NULL, 0, wc->dummy_salt,
				      sizeof(wc->dummy_salt)))
			ret = fail(&c, NULL, "cannot make a bcrypt salt: %s", strerror(errno));
	}
out:
	if (have_doc)
		yaml_document_delete(&c.doc);
	free(text);
	if (ret) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		webconfig_free(wc);
		return ret;
	}
	*out = wc;
	return 0;
}

void webconfig_free(struct webconfig *wc)
{
	if (!wc)
		return;
	free(wc->path);
	free(wc->cert_pem);
	if (wc->key_pem) {
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	free(wc->ca_pem);
	for (size_t i = 0; wc->headers && wc->headers[i]; i++)
		free(wc->headers[i]);
	free(wc->headers);
	for (unsigned int i = 0; i < wc->nusers; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	free(wc);
}
