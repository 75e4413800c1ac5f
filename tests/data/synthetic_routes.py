#!/usr/bin/env python3
# synthetic_routes.py OUT IFINDEX - route messages (RTM_NEWROUTE, AF_INET6, as a dump sends
# them) carrying encapsulations the test kernel cannot hold (mpls, rpl, ioam6, xfrm, ila, types
# past iproute2's list) and values it refuses (a seg6 mode or seg6local action iproute2 does
# not know, flavor bits it has no name for, a BPF program without a name or with characters
# JSON escapes), for tests/data/capture_synthetic.sh. IFINDEX is the device they use.
import socket
import struct
import sys

NESTED = 0x8000


def attr(t, data):
    n = 4 + len(data)
    return struct.pack('HH', n, t) + data + b'\0' * (-n % 4)


def nest(t, *items):
    return attr(t | NESTED, b''.join(items))


def u8(v): return struct.pack('B', v)
def u16(v): return struct.pack('H', v)
def u32(v): return struct.pack('I', v)
def be16(v): return struct.pack('>H', v)
def be32(v): return struct.pack('>I', v)
def be64(v): return struct.pack('>Q', v)
def a6(s): return socket.inet_pton(socket.AF_INET6, s)
def a4(s): return socket.inet_pton(socket.AF_INET, s)


def srh(segs, hmac_id=None, first=None):
    """an SRH as the kernel stores it: segments last to first"""
    n = len(segs)
    tlv = b''
    if hmac_id is not None:
        tlv = bytes([5, 38]) + b'\0\0' + be32(hmac_id) + b'\0' * 32
    hdrlen = (16 * n + len(tlv)) // 8
    flags = 0x08 if hmac_id is not None else 0
    fs = n - 1 if first is None else first
    return bytes([0, hdrlen, 4, n - 1, fs, flags, 0, 0]) + b''.join(a6(s) for s in reversed(segs)) + tlv


ENCAP_TYPE, ENCAP, DST, OIF, GATEWAY, PRIORITY, TABLE, MULTIPATH = 21, 22, 1, 4, 5, 6, 15, 9


def route(dst, plen, oif, enc_type=None, enc=b'', hops=None):
    rtm = struct.pack('BBBBBBBBI', socket.AF_INET6, plen, 0, 0, 254, 3, 0, 1, 0)
    b = attr(TABLE, u32(254)) + attr(DST, a6(dst)) + attr(PRIORITY, u32(1024))
    if hops:
        mp = b''
        for gw, t, e in hops:
            body = attr(GATEWAY, a6(gw))
            if t is not None:
                body += attr(ENCAP, e) + attr(ENCAP_TYPE, u16(t))
            mp += struct.pack('HBBi', 8 + len(body), 0, 0, oif) + body
        b += attr(MULTIPATH, mp)
    else:
        b += attr(OIF, u32(oif))
        if enc_type is not None:
            b += attr(ENCAP, enc) + attr(ENCAP_TYPE, u16(enc_type))  # no NLA_F_NESTED, as the kernel (nla_nest_start_noflag)
    b += attr(20, u8(0))  # RTA_PREF medium
    body = rtm + b
    return struct.pack('IHHII', 16 + len(body), 24, 2, 0, 0) + body


def mpls_labels(*labels):
    out = b''
    for i, lab in enumerate(labels):
        out += be32(lab << 12 | (0x100 if i == len(labels) - 1 else 0))
    return out


def main():
    out, oif = sys.argv[1], int(sys.argv[2])
    R = []
    n = [0]

    def add(enc_type, enc, **kw):
        n[0] += 1
        R.append(route('2001:db8:90::%x' % n[0], 128, oif, enc_type, enc, **kw))

    # mpls (1): DST labels, TTL
    add(1, attr(1, mpls_labels(100, 200, 300)) + attr(2, u8(5)))
    add(1, attr(1, mpls_labels(1048575)))
    # ip (2) with every flag, ip6 (4) with options: geneve (two, one without data), vxlan, erspan
    add(2, attr(1, be64(2**64 - 1)) + attr(2, a4('10.0.0.2')) + attr(3, a4('10.0.0.1')) +
        attr(4, u8(255)) + attr(5, u8(255)) + attr(6, be16(0xffff)))
    # (iproute2 prints an option without data with the previous option's: its buffer is reused)
    gen = (attr(1, be16(258)) + attr(2, u8(7)) + attr(3, bytes.fromhex('0011aabbccddeeff')) +
           attr(1, be16(65535)) + attr(2, u8(255)) + attr(3, b'') +
           attr(1, be16(1)) + attr(2, u8(1)) + attr(3, bytes.fromhex('12345678')))
    add(4, attr(2, a6('2001:db8::9')) + attr(8 | NESTED, nest(1, gen)))
    add(4, attr(2, a6('2001:db8::9')) + attr(8 | NESTED, nest(2, attr(1, u32(4294967295)))))
    add(2, attr(2, a4('10.0.0.2')) + attr(8 | NESTED, nest(3, attr(1, u8(1)) + attr(2, be32(77)))))
    add(2, attr(2, a4('10.0.0.2')) + attr(8 | NESTED, nest(3, attr(1, u8(2)) + attr(3, u8(1)) + attr(4, u8(63)))))
    # ila (3): locator, checksum modes, identifier and hook types, known and not
    add(3, attr(1, be64(0x2001000000000001)) + attr(7, u8(1)) + attr(8, u8(1)) + attr(9, u8(1)))
    add(3, attr(1, be64(0xffff0000ffff0000)) + attr(7, u8(9)) + attr(8, u8(9)) + attr(9, u8(9)))
    add(3, attr(1, be64(1)) + attr(7, u8(0)) + attr(8, u8(6)) + attr(9, u8(0)))
    # seg6 (5): a mode iproute2 does not know; HMAC key 0xffffffff
    add(5, attr(1, struct.pack('i', 7) + srh(['fc00::1'])))
    add(5, attr(1, struct.pack('i', -1) + srh(['fc00::1', 'fc00::2'], hmac_id=0xffffffff)))
    # bpf (6): a program without a name, one whose name needs escapes, headroom
    add(6, nest(1, attr(1, u32(3))) + nest(3, attr(2, b'a\tb"c\\d/e\n\0')) + attr(4, u32(64)))
    # seg6local (7): unknown actions, iif, oif past the known devices, vrftable, flavors bits
    # without names, a BPF endpoint without a name, counters
    add(7, attr(1, u32(0)))
    add(7, attr(1, u32(17)) + attr(3, u32(255)) + attr(9, u32(254)))
    add(7, attr(1, u32(1)) + attr(6, u32(oif)) + attr(7, u32(999)) +
        nest(11, attr(1, u32(1 | 2 | 32)), attr(2, u8(48)), attr(3, u8(16))))
    add(7, attr(1, u32(15)) + nest(8, attr(1, u32(5))) +
        nest(10, attr(2, struct.pack('Q', 123)), attr(3, struct.pack('Q', 45678)), attr(4, struct.pack('Q', 9))))
    add(7, attr(1, u32(9)) + attr(2, srh(['fc00::5', 'fc00::6'], hmac_id=1)))
    # rpl (8): segments left to first
    add(8, attr(1, bytes([0, 4, 3, 2, 0, 0, 0, 0]) + a6('fc00::a') + a6('fc00::b')))
    # ioam6 (9): inline, encap with a tunnel destination, encap without one, an unknown mode
    trace = be16(7) + bytes([0x0b, 0x0c]) + be32(0x800000 << 8)
    freq = attr(4, u32(1)) + attr(5, u32(1000000))
    add(9, attr(1, u8(1)) + attr(3, trace) + freq)
    add(9, attr(1, u8(2)) + attr(2, a6('2001:db8::77')) + attr(3, trace) + freq)
    add(9, attr(1, u8(3)) + attr(3, trace) + freq)
    add(9, attr(1, u8(9)) + attr(2, a6('2001:db8::77')) + attr(3, trace) + freq)
    # xfrm (10): if_id, link by index (known, and not)
    add(10, attr(1, u32(7)) + attr(2, u32(oif)))
    add(10, attr(1, u32(4294967295)) + attr(2, u32(999)))
    # types iproute2 names "unknown"
    add(11, attr(1, u32(1)))
    add(65535, b'')
    # per nexthop: mpls and ioam6 on two hops, none on a third
    n[0] += 1
    R.append(route('2001:db8:91::', 64, oif, hops=[
        ('fe80::1', 1, attr(1, mpls_labels(16, 17))),
        ('fe80::2', 9, attr(1, u8(1)) + attr(3, trace) + freq),
        ('fe80::3', None, b'')]))
    with open(out, 'wb') as f:
        for m in R:
            f.write(m + b'\0' * (-len(m) % 4))


main()
