#!/usr/bin/env python3
# tests/lib/flood.py - hold many connections to an HTTP server, as a flooding client would.
#
#   flood.py HOST PORT MODE N SECONDS
#
# MODE idle: open N connections and send nothing. MODE slowloris: open N connections, send
# "GET / HTTP/1.1\r\n", then one header byte per second on each. Connections the server
# closes are reopened (at most N at a time, at most 20 000 opens in all), so the pressure
# stays on. Prints "ready OPEN" once N are open (or as many as could be), and at the end
# "opened A closed_by_server B" on stdout. Never runs longer than SECONDS (max 300).
import selectors
import socket
import sys
import time


def main():
    host, port, mode, n, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    secs = min(secs, 300.0)
    sel = selectors.DefaultSelector()
    socks = set()
    opened = closed = 0
    start = time.monotonic()
    next_tick = start + 1.0

    def open_one():
        nonlocal opened
        s = socket.socket(socket.AF_INET6 if ':' in host else socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect((host, port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return False
        sel.register(s, selectors.EVENT_READ)
        socks.add(s)
        opened += 1
        if mode == 'slowloris':
            try:
                s.send(b"GET /healthz HTTP/1.1\r\n")
            except OSError:
                pass
        return True

    while len(socks) < n and opened < 20000 and time.monotonic() - start < secs:
        if not open_one():
            time.sleep(0.01)
    print("ready %d" % len(socks), flush=True)
    while time.monotonic() - start < secs:
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b''
            if not data:
                sel.unregister(s)
                socks.discard(s)
                s.close()
                closed += 1
        now = time.monotonic()
        if now >= next_tick:
            next_tick = now + 1.0
            if mode == 'slowloris':
                for s in list(socks):
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
            while len(socks) < n and opened < 20000:
                if not open_one():
                    break
    print("opened %d closed_by_server %d" % (opened, closed), flush=True)


if __name__ == '__main__':
    main()
