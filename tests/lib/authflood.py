#!/usr/bin/env python3
"""authflood.py HOST PORT CAFILE SECONDS CLIENTS USER: CLIENTS threads, each on its own
kept-alive TLS connection (reopened when the server closes it), send GET /metrics with basic
auth for USER and a fresh random wrong password per request, for SECONDS. Prints one JSON line:
{"requests": N, "statuses": {"401": n, "429": n, ...}, "errors": n}. A wrong password that
is never repeated cannot be answered from a cache: each one the server accepts to check costs
it a bcrypt."""
import base64
import json
import os
import socket
import ssl
import sys
import threading
import time


def one_client(host, port, ctx, user, deadline, out, lock):
    s = None
    counts, errors = {}, 0
    buf = b""
    while time.monotonic() < deadline:
        try:
            if s is None:
                raw = socket.create_connection((host, port), timeout=5)
                s = ctx.wrap_socket(raw, server_hostname=host)
                buf = b""
            cred = base64.b64encode(("%s:%s" % (user, os.urandom(8).hex())).encode()).decode()
            s.sendall(("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n\r\n"
                       % cred).encode())
            while b"\r\n\r\n" not in buf:
                d = s.recv(65536)
                if not d:
                    raise ConnectionError("closed")
                buf += d
            head, _, buf = buf.partition(b"\r\n\r\n")
            lines = head.decode("latin1").split("\r\n")
            status = lines[0].split()[1]
            n = 0
            close = False
            for line in lines[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    n = int(v)
                if k.strip().lower() == "connection" and "close" in v.lower():
                    close = True
            while len(buf) < n:
                d = s.recv(65536)
                if not d:
                    raise ConnectionError("closed")
                buf += d
            buf = buf[n:]
            counts[status] = counts.get(status, 0) + 1
            if close:
                s.close()
                s = None
        except (OSError, ValueError, IndexError, ssl.SSLError):
            errors += 1
            if s is not None:
                s.close()
            s = None
            time.sleep(0.05)
    with lock:
        for k, v in counts.items():
            out["statuses"][k] = out["statuses"].get(k, 0) + v
            out["requests"] += v
        out["errors"] += errors


def main():
    host, port, cafile, seconds, clients, user = sys.argv[1:7]
    ctx = ssl.create_default_context(cafile=cafile)
    deadline = time.monotonic() + float(seconds)
    out = {"requests": 0, "statuses": {}, "errors": 0}
    lock = threading.Lock()
    threads = [threading.Thread(target=one_client,
                                args=(host, int(port), ctx, user, deadline, out, lock))
               for _ in range(int(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
