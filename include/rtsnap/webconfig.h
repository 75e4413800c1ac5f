/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * webconfig.h - the --web-config-file: TLS and basic auth settings in the Prometheus
 * exporter-toolkit web configuration format (YAML), so one file serves rtsnapd and
 * node_exporter alike. Loading reads and checks everything the file names (certificates,
 * keys, CA, bcrypt hashes), so a configuration that loads is one the HTTP layer can use.
 *
 * A loaded configuration is immutable (the credential caches are auth.c's, and outlive a
 * reload). It is owned by the HTTP layer from http_start() or http_reload() on, and freed when
 * the last libmicrohttpd daemon started with it stops.
 */
#ifndef RTSNAP_WEBCONFIG_H
#define RTSNAP_WEBCONFIG_H

#include <stddef.h>

enum webconfig_client_auth {
	WC_NO_CLIENT_CERT,
	WC_REQUEST_CLIENT_CERT,
	WC_REQUIRE_ANY_CLIENT_CERT,
	WC_VERIFY_CLIENT_CERT_IF_GIVEN,
	WC_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct webconfig_user {
	char *name;
	char *hash; /* bcrypt, "$2a$", "$2b$" or "$2y$" */
};

struct webconfig {
	char *path;			   /* as given */
	int tls;			   /* cert and key given: every listener speaks TLS only */
	char *cert_pem, *key_pem, *ca_pem; /* NUL-terminated PEM; ca_pem NULL if none */
	enum webconfig_client_auth client_auth;
	char priorities[160]; /* GnuTLS priority string from min_version/max_version */
	/* http_server_config.headers: name, value, ..., NULL (NULL when none) */
	char **headers;
	struct webconfig_user *users;
	unsigned int nusers;
	char dummy_salt[64]; /* bcrypt setting unknown users are checked against */
};

/*
 * Any thread (main in practice). Read and check the file at path; relative file names in it
 * are resolved against the file's directory. On success *out is a new configuration. On
 * failure a negative errno and a one-line explanation in err (file:line:column where it
 * applies); *out untouched. Unknown keys, keys rtsnapd does not implement, unreadable or
 * mismatched certificates and keys, and hashes that are not bcrypt are all refused.
 */
int webconfig_load(const char *path, struct webconfig **out, char *err, size_t errlen)
    __attribute__((warn_unused_result));
/* Free a configuration; accepts NULL and half-built ones. */
void webconfig_free(struct webconfig *wc);
/* The client_auth_type name as the file spells it. */
const char *webconfig_client_auth_name(enum webconfig_client_auth a);

#endif
