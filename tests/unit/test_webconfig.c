// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_webconfig - the exporter-toolkit web configuration: what loads, what is refused and
 * with which message, and basic auth against its bcrypt hashes (right, wrong, unknown user,
 * the credential cache). Certificates are checked end to end in tests/integration/web_tls.t.
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

static void test_basic_auth(void **state)
{
	char *h1 = bcrypt("right horse", 4), *h2 = bcrypt("battery staple", 4);
	char text[512];
	struct webconfig *wc;
	unsigned long long runs, hits;

	(void)state;
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: '%s'\n  bob: \"%s\"\n", h1, h2);
	wc = loaded(text);
	assert_int_equal(wc->nusers, 2);
	runs = auth_bcrypt_runs();
	hits = auth_cache_hits();
	assert_int_equal(auth_check(wc, "alice", "right horse"), 1);
	assert_int_equal(auth_check(wc, "bob", "battery staple"), 1);
	assert_int_equal(auth_bcrypt_runs() - runs, 2);
	/* the same credentials again: from the cache, no bcrypt */
	assert_int_equal(auth_check(wc, "alice", "right horse"), 1);
	assert_int_equal(auth_check(wc, "alice", "right horse"), 1);
	assert_int_equal(auth_bcrypt_runs() - runs, 2);
	assert_int_equal(auth_cache_hits() - hits, 2);
	/* wrong password, another user's password, unknown user: refused, and each runs
	 * bcrypt (a refusal is never cached as a success, an unknown user costs the same) */
	assert_int_equal(auth_check(wc, "alice", "right horsE"), 0);
	assert_int_equal(auth_check(wc, "alice", "battery staple"), 0);
	assert_int_equal(auth_check(wc, "mallory", "right horse"), 0);
	assert_int_equal(auth_check(wc, "", ""), 0);
	assert_int_equal(auth_bcrypt_runs() - runs, 6);
	assert_int_equal(auth_check(wc, "alice", "right horse"), 1);
	assert_int_equal(auth_bcrypt_runs() - runs, 6);
	webconfig_free(wc);
	/* a new configuration (another hash for alice) starts with an empty cache */
	free(h1);
	h1 = bcrypt("new horse", 4);
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", h1);
	wc = loaded(text);
	assert_int_equal(auth_check(wc, "alice", "right horse"), 0);
	assert_int_equal(auth_check(wc, "alice", "new horse"), 1);
	webconfig_free(wc);
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
