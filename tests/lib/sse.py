#!/usr/bin/env python3
# tests/lib/sse.py - a Server-Sent Events client for rtsnapd's /events, and the checks the
# events_*.t tests run on what it received. Standard library only; run it inside the test's
# namespace (ip netns exec NS python3 tests/lib/sse.py ...). Every loop is bounded in time.
#
#   follow URL OUT [--last-event-id N] [--seconds S] [--until-gen G] [--until-id ID]
#          [--stop FILE]
#       follow the stream (until an event or a resync reaches generation G, an event has
#       the id ID (a family=all cursor), the stop file exists, S seconds passed or the
#       server ends it), one JSON line per thing received in OUT:
#       {"type": "open", "status": 200, "headers": {...}}, then per event
#       {"type": "message"|"resync"|..., "id": "G"|null, "data": {...}, "t": unix time},
#       {"type": "comment"} per comment line, {"type": "end"} when the server ends it.
#   apply ROUTES EVENTS OUT [--from G0] [--to G1] [--changes]
#       apply the events of EVENTS (a follow output, or with --changes one /changes
#       document) in order to the routes of ROUTES (a /routes body): each removed object
#       must be there (compared without "expires"); every event's previous must be the
#       generation reached so far. OUT: the resulting routes, normalized (see norm).
#       Exit 1 with the reason on stderr on any gap, resync or missing route.
#   apply-all ROUTES4 ROUTES6 EVENTS OUT --from 4.G4-6.G6 [--changes]
#       the same for a family=all stream (or with --changes one /changes?family=all
#       document): ROUTES4 and ROUTES6 are /routes?family=inet and /routes bodies at the
#       cursor's generations; each event applies to its family's routes, its previous must
#       be that family's generation so far (nothing skipped, nothing repeated) and its id
#       the cursor after it. OUT: the IPv4 routes normalized, then the IPv6 ones. Also
#       prints the added destinations in the order received (family and dst) on stdout.
#   norm FILE
#       the route objects of FILE (a JSON array) without "expires", keys sorted, one per
#       line, sorted: two tables of the same routes give the same bytes.
#   stall URL SECONDS
#       open a stream and never read it (a tiny receive buffer), for SECONDS.
#   multi URL N SECONDS OUT
#       N streams at once (some filtered, some reconnecting with Last-Event-ID at once or
#       after 1.5 s, some reading slowly); OUT: a JSON summary per stream (events, gaps,
#       bad events, resyncs, reconnects).
import json
import os
import select
import socket
import sys
import time
from urllib.parse import urlsplit


def norm_obj(o):
    o = dict(o)
    o.pop("expires", None)
    return json.dumps(o, sort_keys=True, separators=(",", ":"))


class Stream:
    """One /events response, decoded incrementally (chunked transfer, SSE lines)."""

    def __init__(self, url, last_id=None, rcvbuf=None):
        u = urlsplit(url)
        host = u.hostname
        port = u.port or 80
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(10)
        self.sock.connect((host, port))
        self.sock.setblocking(False)
        path = u.path + ("?" + u.query if u.query else "")
        req = "GET %s HTTP/1.1\r\nHost: [%s]:%d\r\nAccept: text/event-stream\r\n" % (path, host, port)
        if last_id is not None:
            req += "Last-Event-ID: %s\r\n" % last_id
        req += "\r\n"
        self.sock.sendall(req.encode())
        self.raw = b""
        self.body = b""
        self.status = None
        self.headers = {}
        self.chunked = False
        self.eof = False
        self.ev = {"data": [], "type": None, "id": None}
        self.last_id = last_id

    def fileno(self):
        return self.sock.fileno()

    def close(self):
        self.sock.close()

    def feed(self, maxbytes=65536):
        """Read what is there; return the things parsed (dicts)."""
        try:
            b = self.sock.recv(maxbytes)
        except BlockingIOError:
            return []
        except OSError:
            b = b""
        if not b:
            self.eof = True
        self.raw += b
        out = []
        if self.status is None:
            i = self.raw.find(b"\r\n\r\n")
            if i < 0:
                if self.eof:
                    out.append({"type": "end"})
                return out
            head = self.raw[:i].decode("latin-1").split("\r\n")
            self.raw = self.raw[i + 4:]
            self.status = int(head[0].split()[1])
            for h in head[1:]:
                k, _, v = h.partition(":")
                self.headers[k.strip().lower()] = v.strip()
            self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
            out.append({"type": "open", "status": self.status, "headers": self.headers})
        if self.chunked:
            while True:
                i = self.raw.find(b"\r\n")
                if i < 0:
                    break
                n = int(self.raw[:i].split(b";")[0], 16)
                if len(self.raw) < i + 2 + n + 2:
                    break
                self.body += self.raw[i + 2:i + 2 + n]
                self.raw = self.raw[i + 2 + n + 2:]
                if n == 0:
                    self.eof = True
                    break
        else:
            self.body += self.raw
            self.raw = b""
        if self.status != 200:
            if self.eof:
                out.append({"type": "error", "status": self.status, "body": self.body.decode("utf-8", "replace")})
                out.append({"type": "end"})
            return out
        while True:
            i = self.body.find(b"\n")
            if i < 0:
                break
            line = self.body[:i].decode("utf-8")
            self.body = self.body[i + 1:]
            if line.endswith("\r"):
                line = line[:-1]
            if line == "":
                if self.ev["data"]:
                    d = "\n".join(self.ev["data"])
                    e = {"type": self.ev["type"] or "message", "id": self.ev["id"], "t": time.time()}
                    try:
                        e["data"] = json.loads(d)
                    except ValueError:
                        e["bad"] = d
                    if self.ev["id"] is not None:
                        self.last_id = self.ev["id"]
                    out.append(e)
                self.ev = {"data": [], "type": None, "id": None}
            elif line.startswith(":"):
                out.append({"type": "comment"})
            else:
                k, _, v = line.partition(":")
                if v.startswith(" "):
                    v = v[1:]
                if k == "data":
                    self.ev["data"].append(v)
                elif k == "event":
                    self.ev["type"] = v
                elif k == "id":
                    self.ev["id"] = v
                elif k == "retry":
                    out.append({"type": "retry", "ms": int(v)})
        if self.eof:
            out.append({"type": "end"})
        return out


def cmd_follow(args):
    url, out = args[0], args[1]
    opts = dict(zip(args[2::2], args[3::2]))
    end = time.time() + float(opts.get("--seconds", "60"))
    until = int(opts["--until-gen"]) if "--until-gen" in opts else None
    until_id = opts.get("--until-id")
    stop = opts.get("--stop")
    s = Stream(url, opts.get("--last-event-id"))
    with open(out, "w") as f:
        while time.time() < end and not s.eof:
            if stop and os.path.exists(stop):
                break
            r, _, _ = select.select([s], [], [], 0.2)
            if not r:
                continue
            done = False
            for e in s.feed():
                f.write(json.dumps(e) + "\n")
                f.flush()
                if until is not None and e.get("id") and int(e["id"]) >= until:
                    done = True
                if until_id is not None and e.get("id") == until_id:
                    done = True
                if until is not None and e["type"] == "resync" and e["data"]["generation"] >= until:
                    done = True  # the stream goes on after that generation
            if done:
                break
    s.close()
    return 0


def load_events(path, changes):
    if changes:
        with open(path) as f:
            d = json.load(f)
        return [{"type": "message", "id": str(d["generation"]), "data": d}]
    ev = []
    with open(path) as f:
        for line in f:
            if line.strip():
                ev.append(json.loads(line))
    return ev


def cmd_apply(args):
    routes, events, out = args[0], args[1], args[2]
    rest = args[3:]
    changes = "--changes" in rest
    rest = [a for a in rest if a != "--changes"]
    opts = dict(zip(rest[::2], rest[1::2]))
    with open(routes) as f:
        state = {}
        for o in json.load(f):
            k = norm_obj(o)
            state[k] = state.get(k, 0) + 1
    gen = int(opts["--from"]) if "--from" in opts else None
    to = int(opts["--to"]) if "--to" in opts else None
    n = 0
    for e in load_events(events, changes):
        if e["type"] in ("open", "comment", "retry", "end"):
            continue
        if "bad" in e:
            print("malformed event: %r" % e["bad"], file=sys.stderr)
            return 1
        if e["type"] != "message":
            print("a %s event: %s" % (e["type"], json.dumps(e.get("data"))), file=sys.stderr)
            return 1
        d = e["data"]
        g = d["generation"]
        if e["id"] != str(g):
            print("id %s for generation %s" % (e["id"], g), file=sys.stderr)
            return 1
        if gen is not None and g <= gen:
            continue  # already in the routes read
        if to is not None and g > to:
            break
        if gen is not None and d["previous"] != gen:
            print("gap: generation %d follows %d, we had %d" % (g, d["previous"], gen), file=sys.stderr)
            return 1
        for o in d["removed"]:
            k = norm_obj(o)
            if not state.get(k):
                print("generation %d removes a route we do not have: %s" % (g, k), file=sys.stderr)
                return 1
            state[k] -= 1
        for o in d["added"]:
            k = norm_obj(o)
            state[k] = state.get(k, 0) + 1
        gen = g
        n += 1
    with open(out, "w") as f:
        for k in sorted(k for k, v in state.items() for _ in range(v)):
            f.write(k + "\n")
    print("applied %d events, at generation %s" % (n, gen), file=sys.stderr)
    return 0


def cmd_apply_all(args):
    r4, r6, events, out = args[0], args[1], args[2], args[3]
    rest = args[4:]
    changes = "--changes" in rest
    rest = [a for a in rest if a != "--changes"]
    opts = dict(zip(rest[::2], rest[1::2]))
    state = {}
    for fam, path in (("inet", r4), ("inet6", r6)):
        state[fam] = {}
        with open(path) as f:
            for o in json.load(f):
                k = norm_obj(o)
                state[fam][k] = state[fam].get(k, 0) + 1
    c = opts["--from"]
    gen = {"inet": int(c.split("-")[0][2:]), "inet6": int(c.split("-")[1][2:])}
    if changes:
        with open(events) as f:
            d = json.load(f)
        if d["previous"] != c:
            print("previous %s, not %s" % (d["previous"], c), file=sys.stderr)
            return 1
        evs = [{"type": "message", "id": None, "data": x} for x in d["changes"]]
    else:
        evs = load_events(events, False)
    n = 0
    for e in evs:
        if e["type"] in ("open", "comment", "retry", "end"):
            continue
        if "bad" in e:
            print("malformed event: %r" % e["bad"], file=sys.stderr)
            return 1
        if e["type"] != "message":
            print("a %s event: %s" % (e["type"], json.dumps(e.get("data"))), file=sys.stderr)
            return 1
        d = e["data"]
        fam = d.get("family")
        if fam not in state:
            print("an event without a family: %s" % json.dumps(d), file=sys.stderr)
            return 1
        if d["previous"] != gen[fam] or d["generation"] <= gen[fam]:
            print("%s: generation %d after %d, we had %d" % (fam, d["generation"], d["previous"], gen[fam]),
                  file=sys.stderr)
            return 1
        for o in d["removed"]:
            k = norm_obj(o)
            if not state[fam].get(k):
                print("%s generation %d removes a route we do not have: %s" % (fam, d["generation"], k),
                      file=sys.stderr)
                return 1
            state[fam][k] -= 1
        for o in d["added"]:
            k = norm_obj(o)
            state[fam][k] = state[fam].get(k, 0) + 1
            print(fam, o["dst"])
        gen[fam] = d["generation"]
        cur = "4.%d-6.%d" % (gen["inet"], gen["inet6"])
        if not changes and e["id"] != cur:
            print("id %s, the cursor is %s" % (e["id"], cur), file=sys.stderr)
            return 1
        n += 1
    with open(out, "w") as f:
        for fam in ("inet", "inet6"):
            for k in sorted(k for k, v in state[fam].items() for _ in range(v)):
                f.write(k + "\n")
    print("applied %d events, at 4.%d-6.%d" % (n, gen["inet"], gen["inet6"]), file=sys.stderr)
    return 0


def cmd_norm(args):
    with open(args[0]) as f:
        v = json.load(f)
    for k in sorted(norm_obj(o) for o in v):
        print(k)
    return 0


def cmd_stall(args):
    s = Stream(args[0], rcvbuf=4096)
    time.sleep(float(args[1]))
    s.close()
    return 0


def cmd_multi(args):
    """N streams in one process; each checks that its events follow one another."""
    url, n, seconds, out = args[0], int(args[1]), float(args[2]), args[3]
    filters = ["", "?table=100", "?prefix=2001:db8:c0::/44", "?dev=v0", "?protocol=static"]
    clients = []
    for i in range(n):
        q = filters[i % len(filters)]
        c = {"i": i, "url": url + q, "s": None, "gen": None, "events": 0, "gaps": 0, "bad": 0,
             "resyncs": 0, "reconnects": 0, "slow": i % 7 == 3, "ends": 0, "errors": 0}
        clients.append(c)
    end = time.time() + seconds
    t0 = time.time()
    while time.time() < end:
        for c in clients:
            if c.get("pause_until", 0) > time.time():
                continue
            if c["s"] is None or c["s"].eof:
                if c["s"] is not None:
                    c["s"].close()
                    c["reconnects"] += 1
                try:
                    c["s"] = Stream(c["url"], c["gen"])
                except OSError:
                    c["errors"] += 1
                    c["s"] = None
                    continue
            # every few seconds a third of them drop and resume with Last-Event-ID
            if c["i"] % 3 == 0 and time.time() - t0 > 2 and c["events"] and c["events"] % 40 == 0 \
                    and not c.get("cut_at") == c["events"]:
                c["cut_at"] = c["events"]
                c["s"].close()
                c["s"] = None
                c["reconnects"] += 1
                if c["i"] % 6 == 0:  # away for a while: maybe beyond the history
                    c["pause_until"] = time.time() + 1.5
        socks = [c["s"] for c in clients if c["s"] is not None]
        r, _, _ = select.select(socks, [], [], 0.1)
        for s in r:
            c = next(c for c in clients if c["s"] is s)
            if c["slow"]:
                time.sleep(0.002)
            for e in s.feed(4096 if c["slow"] else 65536):
                if e["type"] == "message":
                    if "bad" in e:
                        c["bad"] += 1
                        continue
                    d = e["data"]
                    if c["gen"] is not None and d["previous"] != int(c["gen"]):
                        c["gaps"] += 1
                    c["gen"] = str(d["generation"])
                    c["events"] += 1
                elif e["type"] == "resync":
                    c["resyncs"] += 1
                    c["gen"] = str(e["data"]["generation"])
                elif e["type"] == "error":
                    c["errors"] += 1
                elif e["type"] == "end":
                    c["ends"] += 1
    for c in clients:
        if c["s"] is not None:
            c["s"].close()
        c["s"] = None
    with open(out, "w") as f:
        json.dump(clients, f)
    return 0


def main():
    cmds = {"follow": cmd_follow, "apply": cmd_apply, "apply-all": cmd_apply_all,
            "norm": cmd_norm, "stall": cmd_stall, "multi": cmd_multi}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__ or "usage: sse.py follow|apply|norm|stall|multi ...", file=sys.stderr)
        return 2
    return cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
