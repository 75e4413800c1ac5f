// SPDX-License-Identifier: GPL-2.0-or-later
/* test_listen_names - --listen address forms, and iproute2 name files read as ip reads them. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "rtsnap/http.h"
#include "rtsnap/names.h"

static void test_listen_forms(void **state)
{
	struct sockaddr_storage ss;
	unsigned int len;
	char txt[64];

	(void)state;
	assert_int_equal(http_parse_listen("[::1]:9816", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9816);
	inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, txt, sizeof(txt));
	assert_string_equal(txt, "::1");
	assert_int_equal(http_parse_listen("127.0.0.1:80", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(http_parse_listen("localhost:8080", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(http_parse_listen("[2001:db8::1]:0", &ss, &len), 0);
	assert_int_equal(http_parse_listen("unix:/run/rtsnap.sock", &ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_UNIX);
	assert_string_equal(((struct sockaddr_un *)&ss)->sun_path, "/run/rtsnap.sock");
}

static void test_listen_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		":",
		"[::1]",
		"[::1]:",
		"[::1]:65536",
		"[::1]:-1",
		"[::1]:80x",
		"::1:80",
		"[nothost]:80",
		"300.1.1.1:80",
		"host",
		"unix:",
		"[::1:80",
		"127.0.0.1:99999999999",
	};
	struct sockaddr_storage ss;
	unsigned int len;
	char longpath[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (http_parse_listen(bad[i], &ss, &len) == 0)
			fail_msg("accepted '%s'", bad[i]);
	}
	memset(longpath, 'a', sizeof(longpath));
	memcpy(longpath, "unix:/", 6);
	longpath[sizeof(longpath) - 1] = 0;
	assert_int_not_equal(http_parse_listen(longpath, &ss, &len), 0);
}

static void test_names_files(void **state)
{
	char dir[] = "/tmp/rtsnap-names-XXXXXX", path[256], b[12];
	struct names *n = NULL;
	uint32_t id;
	uint8_t p;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rt_tables", dir);
	f = fopen(path, "w");
	fputs("# comment\n255\tlocal\n254\tmain\n100 uplink\n0x200\thex\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/rt_tables.d", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/rt_tables.d/extra.conf", dir);
	f = fopen(path, "w");
	fputs("4242 extra\n", f);
	fclose(f);
	assert_int_equal(names_load(dir, &n), 0);
	assert_string_equal(names_table(n, 100, b), "uplink");
	assert_string_equal(names_table(n, 512, b), "hex");
	assert_string_equal(names_table(n, 4242, b), "extra");
	assert_string_equal(names_table(n, 77, b), "77");
	assert_string_equal(names_table(n, 254, b), "main");
	assert_int_equal(names_table_id(n, "uplink", &id), 0);
	assert_int_equal(id, 100);
	assert_int_equal(names_table_id(n, "300", &id), 0);
	assert_int_equal(id, 300);
	assert_int_not_equal(names_table_id(n, "nosuch", &id), 0);
	assert_string_equal(names_protocol(n, 4, b), "static");
	assert_string_equal(names_protocol(n, 9, b), "ra");
	assert_string_equal(names_protocol(n, 250, b), "250");
	assert_int_equal(names_protocol_id(n, "kernel", &p), 0);
	assert_int_equal(p, 2);
	assert_string_equal(names_scope(n, 253, b), "link");
	assert_string_equal(names_type(7, b), "unreachable");
	names_free(n);
	unlink(path);
	snprintf(path, sizeof(path), "%s/rt_tables.d", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/rt_tables", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_forms),
		cmocka_unit_test(test_listen_rejects),
		cmocka_unit_test(test_names_files),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
