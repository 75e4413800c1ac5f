// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_utf8 - utf8_len() against every shape RFC 3629 allows and each it forbids, and against
 * glibc's own decoder over every two- and three-byte sequence.
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <cmocka.h>

#include "rtsnap/utf8.h"

static size_t len(const char *s)
{
	return utf8_len((const unsigned char *)s);
}

static void test_shapes(void **state)
{
	(void)state;
	assert_int_equal(len("a"), 1);
	assert_int_equal(len(""), 1);		      /* the terminator is a character of its own */
	assert_int_equal(len("\xc3\xa9"), 2);	      /* é */
	assert_int_equal(len("\xe2\x82\xac"), 3);     /* € */
	assert_int_equal(len("\xf0\x9f\x98\x80"), 4); /* U+1F600 */
	assert_int_equal(len("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
	assert_int_equal(len("\x80"), 0);	      /* a continuation byte alone */
	assert_int_equal(len("\xc0\xaf"), 0);	      /* overlong '/' */
	assert_int_equal(len("\xc1\xbf"), 0);
	assert_int_equal(len("\xe0\x80\xaf"), 0);     /* overlong, three bytes */
	assert_int_equal(len("\xed\xa0\x80"), 0);     /* surrogate U+D800 */
	assert_int_equal(len("\xf0\x80\x80\xaf"), 0); /* overlong, four bytes */
	assert_int_equal(len("\xf4\x90\x80\x80"), 0); /* U+110000 */
	assert_int_equal(len("\xf5\x80\x80\x80"), 0);
	assert_int_equal(len("\xff"), 0);
	assert_int_equal(len("\xc3"), 0); /* cut short by the terminator */
	assert_int_equal(len("\xe2\x82"), 0);
	assert_int_equal(len("\xf0\x9f\x98"), 0);
	assert_int_equal(len("\xe2"
			     "a"
			     "\xac"),
			 0);
}

/* Every sequence of two and three bytes (and a terminator), against mbrtowc() in C.UTF-8:
 * the same verdict and the same length. */
static void test_against_glibc(void **state)
{
	unsigned char b[5] = { 0 };
	size_t checked = 0;

	(void)state;
	assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
	for (unsigned int x = 0x80; x < 0x100; x++) {
		for (unsigned int y = 1; y < 0x100; y++) {
			for (unsigned int z = 1; z < 0x100;
			     z += (x >= 0xe0 && x <= 0xef) ? 1 : 0x7f) {
				mbstate_t st;
				wchar_t wc;
				size_t want;

				b[0] = (unsigned char)x;
				b[1] = (unsigned char)y;
				b[2] = (unsigned char)z;
				memset(&st, 0, sizeof(st));
				want = mbrtowc(&wc, (const char *)b, 4, &st);
				if (want == (size_t)-1 || want == (size_t)-2 || want > 3)
					want = 0;
				if (want && x >= 0xf0)
					want =
					    0; /* four-byte leads need a fourth byte, here z or NUL */
				assert_int_equal(utf8_len(b) > 3 ? 0 : utf8_len(b), want);
				checked++;
			}
		}
	}
	assert_true(checked > 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_against_glibc),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
