#!/usr/bin/env python3
# tests/lib/flood.py - hold many connections to an HTTP server, as a flooding client would.
#
#   flood.py HOST PORT MODE N SECONDS [once]
#
# HOST "unix:/path" connects to a unix socket (PORT is then ignored).
# MODE idle: open N connections and send nothing. MODE slowloris: open N connections, send
# "GET / HTTP/1.1\r\n", then one header byte per second on each. MODE keepalive: each of N
# connections sends one complete, valid request (GET /healthz), reads the answer, then starts
# its next request on the same kept-alive connection and trickles it, one header byte a second
# (what the gate in front of the first request cannot see). MODE body: each sends a valid head
# announcing a 60 000-byte body (under the gate's 64 KiB) and trickles the body, a byte a second.
#
# Connections the server closes are reopened (at most N at a time, at most 20 000 opens in all),
# so the pressure stays on; with "once" they are not. Prints "ready OPEN" once N are open (or as
# many as could be), and at the end "opened A closed_by_server B" on stdout; keepalive and body
# add "answered C refused D trickled E trickled_closed F hold_p50 G hold_max H still_trickling I
# longest_trickling J": C first requests answered 200, D answered otherwise (503), E connections
# that started trickling, F of them closed by the server, G/H how long those had trickled (s),
# I still trickling at the end and J the longest of those (s). Never runs longer than SECONDS
# (max 300); with "once" it ends as soon as the server has closed every connection; SIGTERM ends
# it early (with the summary).
import selectors
import signal
import socket
import sys
import time

FIRST = b"GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n"
NEXT = b"GET /healthz HTTP/1.1\r\n"
BODY_HEAD = b"GET /healthz HTTP/1.1\r\nHost: flood\r\nContent-Length: 60000\r\n\r\n"


def main():
    host, port, mode, n, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    once = len(sys.argv) > 6 and sys.argv[6] == 'once'
    secs = min(secs, 300.0)
    sel = selectors.DefaultSelector()
    socks = {}  # socket -> state: 'wait' (first answer pending), 'trickle' (since when), None
    opened = closed = answered = refused = trickled = 0
    holds = []
    start = time.monotonic()
    next_tick = start + 1.0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))  # end early, with the summary

    def open_one():
        nonlocal opened, trickled
        if host.startswith('unix:'):
            s, addr = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), host[5:]
        else:
            s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET, socket.SOCK_STREAM)
            addr = (host, port)
        if mode == 'idle':
            s.setblocking(False)
        else:
            s.settimeout(2)  # the request follows at once: wait for the handshake
        try:
            s.connect(addr)
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        socks[s] = None
        opened += 1
        first = {'slowloris': NEXT, 'keepalive': FIRST, 'body': BODY_HEAD}.get(mode)
        if first:
            try:
                s.send(first)
            except OSError:
                pass  # shows up as a close
        if mode == 'keepalive':
            socks[s] = ('wait', 0.0)
        elif mode == 'body':
            socks[s] = ('trickle', time.monotonic())
            trickled += 1
        return True

    def close(s, now):
        nonlocal closed
        st = socks.pop(s)
        sel.unregister(s)
        s.close()
        closed += 1
        if st and st[0] == 'trickle':
            holds.append(now - st[1])

    while len(socks) < n and opened < 20000 and time.monotonic() - start < secs:
        if not open_one():
            time.sleep(0.01)
    print("ready %d" % len(socks), flush=True)
    while time.monotonic() - start < secs and not stop:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            if s not in socks:
                continue
            try:
                data = s.recv(4096)
            except OSError:
                data = b''
            now = time.monotonic()
            if not data:
                close(s, now)
                continue
            st = socks[s]
            if st and st[0] == 'wait':
                if data.startswith(b"HTTP/1.1 200"):
                    answered += 1
                    try:
                        s.send(NEXT)
                    except OSError:
                        pass
                    socks[s] = ('trickle', now)
                    trickled += 1
                else:
                    refused += 1
                    socks[s] = None
        now = time.monotonic()
        if once and not socks:
            break
        if now >= next_tick:
            next_tick = now + 1.0
            for s, st in list(socks.items()):
                if mode == 'slowloris' or (st and st[0] == 'trickle'):
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
            while not once and len(socks) < n and opened < 20000:
                if not open_one():
                    break
    now = time.monotonic()
    line = "opened %d closed_by_server %d" % (opened, closed)
    if mode in ('keepalive', 'body'):
        holds.sort()
        left = [now - st[1] for st in socks.values() if st and st[0] == 'trickle']
        line += " answered %d refused %d trickled %d trickled_closed %d hold_p50 %.1f hold_max %.1f" \
            " still_trickling %d longest_trickling %.1f" % (
                answered, refused, trickled, len(holds), holds[len(holds) // 2] if holds else 0,
                holds[-1] if holds else 0, len(left), max(left) if left else 0)
    print(line, flush=True)


if __name__ == '__main__':
    main()
