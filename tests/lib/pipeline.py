#!/usr/bin/env python3
"""pipeline.py HOST PORT FIRST SECOND [--tls CAFILE] [--wait S]: send FIRST and SECOND (Python
string escapes, e.g. \\r\\n and \\x00) in one write on one connection (plain or TLS), read until
the server closes or S seconds (default 10) pass, and print one JSON line:
  {"statuses": [...], "json_errors": [...], "heads": N, "closed": bool, "seconds": T}
statuses: the status of each response in order; json_errors: for each, whether its body is a
JSON object with a string "error" and its Content-Type is application/json; heads: how many
status lines ("HTTP/1.x NNN" at the start of a line) the bytes hold; seconds: from the write to the close (or the
wait's end)."""
import json
import re
import socket
import ssl
import sys
import time


def unescape(s):
    return s.encode().decode('unicode_escape').encode('latin1')


def parse(data):
    statuses, errors, i = [], [], 0
    while True:
        end = data.find(b"\r\n\r\n", i)
        if end < 0 or not data.startswith(b"HTTP/1.", i):
            break
        head = data[i:end].decode('latin1').split("\r\n")
        statuses.append(int(head[0].split()[1]))
        fields = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        n = int(fields.get("content-length", "0"))
        body = data[end + 4:end + 4 + n]
        ok = False
        if fields.get("content-type", "").startswith("application/json"):
            try:
                ok = isinstance(json.loads(body).get("error"), str)
            except (ValueError, AttributeError):
                ok = False
        errors.append(ok)
        i = end + 4 + n
    return statuses, errors


def main():
    args = sys.argv[1:]
    cafile, wait = None, 10.0
    if "--tls" in args:
        k = args.index("--tls")
        cafile = args[k + 1]
        del args[k:k + 2]
    if "--wait" in args:
        k = args.index("--wait")
        wait = float(args[k + 1])
        del args[k:k + 2]
    host, port, first, second = args[0], int(args[1]), unescape(args[2]), unescape(args[3])
    s = socket.create_connection((host, port), timeout=wait)
    if cafile:
        ctx = ssl.create_default_context(cafile=cafile)
        s = ctx.wrap_socket(s, server_hostname=host)
    data, closed = b"", False
    t0 = time.monotonic()
    s.sendall(first + second)
    try:
        while time.monotonic() - t0 < wait:
            s.settimeout(max(0.01, wait - (time.monotonic() - t0)))
            d = s.recv(65536)
            if not d:
                closed = True
                break
            data += d
    except (socket.timeout, TimeoutError):
        pass
    except (ConnectionResetError, ssl.SSLError, OSError):
        closed = True
    seconds = time.monotonic() - t0
    statuses, errors = parse(data)
    heads = len(re.findall(rb"(?:^|\n)HTTP/1\.[01] [0-9]{3} ", data))
    print(json.dumps({"statuses": statuses, "json_errors": errors, "heads": heads,
                      "closed": closed, "seconds": round(seconds, 2)}))


if __name__ == "__main__":
    main()
