// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_webconfig - the exporter-toolkit web configuration: what loads, what is refused and
 * with which message, and basic auth against its bcrypt hashes (right, wrong, unknown user,
 * the caches of verified and refused credentials, the limit on failing addresses, checks of
 * the same credentials coalesced, cancelled tickets). Certificates are checked end to end in tests/integration/web_tls.t.
 */
#include <crypt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "rtsnap/auth.h"
#include "rtsnap/webconfig.h"

static char s_dir[64];

static const char *write_cfg(const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/web.yml", s_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Load text; expect failure with every string of want (NULL-terminated) in the message. */
static void refused(const char *text, const char *const *want)
{
	struct webconfig *wc = NULL;
	char err[512];

	assert_int_not_equal(webconfig_load(write_cfg(text), &wc, err, sizeof(err)), 0);
	assert_null(wc);
	for (; *want; want++) {
		if (!strstr(err, *want))
			fail_msg("message '%s' lacks '%s'", err, *want);
	}
}

static struct webconfig *loaded(const char *text)
{
	struct webconfig *wc = NULL;
	char err[512];

	if (webconfig_load(write_cfg(text), &wc, err, sizeof(err)))
		fail_msg("refused: %s", err);
	return wc;
}

static char *bcrypt(const char *pw, unsigned long cost)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data cd;

	memset(&cd, 0, sizeof(cd));
	assert_non_null(crypt_gensalt_rn("$2y$", cost, NULL, 0, setting, sizeof(setting)));
	return strdup(crypt_rn(pw, setting, &cd, sizeof(cd)));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("tls_server_confg:\n  cert_file: x\n",
		(const char *[]){ "web.yml:1:1:", "unknown key 'tls_server_confg'", NULL });
	refused("tls_server_config:\n  certfile: a.crt\n",
		(const char *[]){ ":2:3:", "unknown key 'certfile' in tls_server_config", NULL });
	refused("tls_server_config:\n  min_version: TLS12\n  min_version: TLS13\n",
		(const char *[]){ ":3:3:", "key 'min_version' given twice", NULL });
	refused("basic_auth_users:\n  alice: plaintext\n",
		(const char *[]){ "'alice' is not a bcrypt hash", NULL });
	refused("tls_server_config:\n  key_file: a.key\n",
		(const char *[]){ "key_file given without cert_file", NULL });
	refused("tls_server_config:\n  cert_file: nothere.crt\n  key_file: nothere.key\n",
		(const char *[]){ "cannot read", "nothere.crt", "No such file", NULL });
	refused("tls_server_config:\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		(const char *[]){ "cipher_suites is not supported", NULL });
	refused("tls_server_config:\n  min_version: TLS14\n",
		(const char *[]){ "'TLS14' is not one of", NULL });
	refused("tls_server_config:\n  client_auth_type: RequireClientCert\n",
		(const char *[]){ "client_auth_type: 'RequireClientCert'", NULL });
	refused("rate_limit:\n  interval: 1s\n", (const char *[]){ "rate_limit", NULL });
	refused("http_server_config:\n  headers:\n    X-Powered-By: me\n",
		(const char *[]){ "'X-Powered-By' is not one of", NULL });
	refused("tls_server_config: [\n", (const char *[]){ "YAML", NULL });
}

static void test_loads(void **state)
{
	struct webconfig *wc;

	(void)state;
	wc = loaded("");
	assert_int_equal(wc->tls, 0);
	assert_int_equal(wc->nusers, 0);
	webconfig_free(wc);
	/* empty values of unsupported keys are the defaults; no certificate: no TLS */
	wc = loaded("tls_server_config:\n  cipher_suites: []\n  client_allowed_sans:\n"
		    "http_server_config:\n  http2: true\n  headers:\n"
		    "    X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\n");
	assert_int_equal(wc->tls, 0);
	assert_non_null(wc->headers);
	assert_string_equal(wc->headers[0], "X-Frame-Options");
	assert_string_equal(wc->headers[1], "deny");
	assert_string_equal(wc->headers[2], "Strict-Transport-Security");
	assert_null(wc->headers[4]);
	webconfig_free(wc);
}

/* A ticket's done(): count the calls. */
static void on_done(void *cls)
{
	__atomic_add_fetch((int *)cls, 1, __ATOMIC_SEQ_CST);
}

/* auth_check() from the IPv6 address 2001:db8:N::1, waiting for a pending verdict. */
static int check(struct webconfig *wc, const char *user, const char *pass, int n)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct auth_ticket *t = NULL;
	unsigned int retry;
	int done = 0, r;

	a.sin6_addr.s6_addr[0] = 0x20;
	a.sin6_addr.s6_addr[1] = 0x01;
	a.sin6_addr.s6_addr[2] = 0x0d;
	a.sin6_addr.s6_addr[3] = 0xb8;
	a.sin6_addr.s6_addr[5] = (unsigned char)n;
	a.sin6_addr.s6_addr[15] = 1;
	r = auth_check(wc, user, pass, (struct sockaddr *)&a, sizeof(a), wc, on_done, &done, &t,
		       &retry);
	if (r != AUTH_PENDING)
		return r;
	for (int i = 0; i < 10000 && !__atomic_load_n(&done, __ATOMIC_SEQ_CST); i++)
		usleep(1000);
	assert_int_equal(done, 1);
	r = auth_ticket_result(t);
	auth_ticket_free(t);
	return r;
}

static void test_basic_auth(void **state)
{
	char *h1 = bcrypt("right horse", 4), *h2 = bcrypt("battery staple", 4);
	char text[512];
	struct webconfig *wc;
	struct auth_stats st0, st;
	struct auth_ticket *t[3];
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x0a000001) };
	unsigned int retry;
	int done = 0;

	(void)state;
	assert_int_equal(auth_start(), 0);
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n  bob: \"%s\"\n", h1, h2);
	wc = loaded(text);
	assert_int_equal(wc->nusers, 2);
	auth_stats(&st0);
	assert_int_equal(check(wc, "alice", "right horse", 1), AUTH_OK);
	assert_int_equal(check(wc, "bob", "battery staple", 1), AUTH_OK);
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 2);
	/* the same credentials again: from the cache, no bcrypt, from any address */
	assert_int_equal(check(wc, "alice", "right horse", 1), AUTH_OK);
	assert_int_equal(check(wc, "alice", "right horse", 2), AUTH_OK);
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 2);
	assert_int_equal(st.cached_ok - st0.cached_ok, 2);
	/* wrong password, another user's password, unknown user: refused, each hashed once (an
	 * unknown user costs the same); the same refusal again comes from the cache */
	assert_int_equal(check(wc, "alice", "right horsE", 3), AUTH_BAD);
	assert_int_equal(check(wc, "alice", "battery staple", 3), AUTH_BAD);
	assert_int_equal(check(wc, "mallory", "right horse", 3), AUTH_BAD);
	assert_int_equal(check(wc, "alice", "right horsE", 3), AUTH_BAD);
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 5);
	assert_int_equal(st.cached_bad - st0.cached_bad, 1);
	/* two more failures use up address 3's five: it is refused before any hash, but a
	 * verified password is still welcome from it, and address 4 is not refused */
	assert_int_equal(check(wc, "bob", "x1", 3), AUTH_BAD);
	assert_int_equal(check(wc, "bob", "x2", 3), AUTH_BAD);
	assert_int_equal(check(wc, "bob", "x3", 3), AUTH_LIMITED);
	assert_int_equal(check(wc, "alice", "right horse", 3), AUTH_OK);
	assert_int_equal(check(wc, "bob", "x3", 4), AUTH_BAD);
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 8);
	assert_int_equal(st.limited - st0.limited, 1);
	/* the same new credentials asked three times at once: one hash, three answers */
	for (int i = 0; i < 3; i++)
		assert_int_equal(auth_check(wc, "bob", "y", (struct sockaddr *)&a4, sizeof(a4), wc,
					    on_done, &done, &t[i], &retry),
				 AUTH_PENDING);
	for (int i = 0; i < 10000 && __atomic_load_n(&done, __ATOMIC_SEQ_CST) < 3; i++)
		usleep(1000);
	assert_int_equal(done, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(auth_ticket_result(t[i]), AUTH_BAD);
		auth_ticket_free(t[i]);
	}
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 9);
	assert_int_equal(st.coalesced - st0.coalesced, 2);
	webconfig_free(wc);
	/* a reload that keeps alice's hash keeps her verified password: no hash */
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n", h1);
	wc = loaded(text);
	assert_int_equal(check(wc, "alice", "right horse", 5), AUTH_OK);
	auth_stats(&st);
	assert_int_equal(st.bcrypt_runs - st0.bcrypt_runs, 9);
	webconfig_free(wc);
	/* another hash for alice: what was verified or refused for the old one is forgotten */
	free(h1);
	h1 = bcrypt("new horse", 4);
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", h1);
	wc = loaded(text);
	assert_int_equal(check(wc, "alice", "right horse", 6), AUTH_BAD);
	assert_int_equal(check(wc, "alice", "new horse", 6), AUTH_OK);
	/* cancelled: answered at once, never twice */
	done = 0;
	assert_int_equal(auth_check(wc, "alice", "z", (struct sockaddr *)&a4, sizeof(a4), wc,
				    on_done, &done, &t[0], &retry),
			 AUTH_PENDING);
	auth_cancel(wc);
	assert_int_equal(done, 1);
	assert_true(auth_ticket_result(t[0]) == AUTH_CANCELLED ||
		    auth_ticket_result(t[0]) == AUTH_BAD);
	usleep(100000);
	assert_int_equal(done, 1);
	auth_ticket_free(t[0]);
	webconfig_free(wc);
	auth_stop();
	free(h1);
	free(h2);
}

static int setup(void **state)
{
	(void)state;
	snprintf(s_dir, sizeof(s_dir), "/tmp/test_webconfig.XXXXXX");
	return mkdtemp(s_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/web.yml", s_dir);
	unlink(path);
	return rmdir(s_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_loads),
		cmocka_unit_test(test_basic_auth),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
