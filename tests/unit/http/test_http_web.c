// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_http_web - the web page's generated asset table (every file of web/ present, gzip
 * copies that inflate to the plain bytes, content types, quoted ETags) and the
 * Accept-Encoding negotiation of http_web.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "rtsnap/http_reply.h"
#include "rtsnap/http_web.h"

static void test_assets(void **state)
{
	static const char *const want[][2] = {
		{ "/", "text/html; charset=utf-8" },
		{ "/web/app.js", "text/javascript; charset=utf-8" },
		{ "/web/style.css", "text/css; charset=utf-8" },
		{ "/web/icon.svg", "image/svg+xml" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct web_asset *a = http_web_asset(want[i][0]);

		assert_non_null(a);
		assert_string_equal(a->ctype, want[i][1]);
		assert_true(http_web_path(want[i][0]));
	}
	assert_true(http_web_path("/web/about.json"));
	assert_false(http_web_path("/web/"));
	assert_false(http_web_path("/web/nope.js"));
	assert_false(http_web_path("/index.html"));
	assert_null(http_web_asset("/web/app.j"));

	for (unsigned int i = 0; i < web_nassets; i++) {
		const struct web_asset *a = &web_assets[i];
		unsigned char *out = malloc(a->plain_len + 1);
		z_stream z = { 0 };
		size_t el = strlen(a->etag);

		assert_non_null(out);
		assert_true(el > 2 && a->etag[0] == '"' && a->etag[el - 1] == '"');
		assert_true(a->gz_len > 18 && a->gz[0] == 0x1f && a->gz[1] == 0x8b);
		/* one gzip member that inflates to exactly the plain bytes */
		assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
		z.next_in = (unsigned char *)a->gz;
		z.avail_in = (unsigned int)a->gz_len;
		z.next_out = out;
		z.avail_out = (unsigned int)a->plain_len + 1;
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		assert_int_equal(z.total_out, a->plain_len);
		assert_int_equal(z.avail_in, 0);
		assert_memory_equal(out, a->plain, a->plain_len);
		inflateEnd(&z);
		free(out);
		for (unsigned int j = 0; j < i; j++)
			assert_string_not_equal(web_assets[j].path, a->path);
	}
}

static void test_accepts_gzip(void **state)
{
	(void)state;
	assert_false(http_accepts_gzip(NULL));
	assert_false(http_accepts_gzip(""));
	assert_true(http_accepts_gzip("gzip"));
	assert_true(http_accepts_gzip("GZIP"));
	assert_true(http_accepts_gzip("x-gzip"));
	assert_true(http_accepts_gzip("gzip, deflate, br, zstd"));
	assert_true(http_accepts_gzip("br;q=1.0, gzip;q=0.8, *;q=0.1"));
	assert_true(http_accepts_gzip("deflate , gzip ;q=0.5"));
	assert_true(http_accepts_gzip("*"));
	assert_false(http_accepts_gzip("gzip;q=0"));
	assert_false(http_accepts_gzip("gzip; q=0.0, *"));
	assert_false(http_accepts_gzip("deflate, br"));
	assert_false(http_accepts_gzip("gzipx"));
	assert_false(http_accepts_gzip("identity, *;q=0"));
	assert_false(http_accepts_gzip("*;q=0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assets),
		cmocka_unit_test(test_accepts_gzip),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
