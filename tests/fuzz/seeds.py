#!/usr/bin/env python3
"""seeds.py - make the seed corpora of tests/fuzz/ (run by hand, not by make).

    tests/fuzz/seeds.py CAPTURE.pcapng...

Takes the NLM and NSM calls out of packet captures the integration and
end-to-end tests make (test_nsm.sh keeps nsm.pcapng in its scratch
directory, tests/e2e keeps build/e2e/e2e.pcapng: a real Linux client over
TCP and UDP), with tshark, and adds calls of the procedures and versions
those captures lack (v1/v3, CANCEL, the _MSG forms, SHARE, UNSHARE,
NM_LOCK, FREE_ALL, procedure 16, SM_STAT/MON/UNMON/UNMON_ALL), built here
with the same XDR layout.  Writes, replacing what was there:

  corpus/nlmxdr/    argument type byte + the arguments of a v4 call
  corpus/recmark/   limit (2 bytes) + [n][n bytes of the TCP stream]...
  corpus/dispatch/  config byte + [len:2][flags:1][call]... sequences
                    (and answers to the server's own calls)

    tests/fuzz/seeds.py --ctl

writes only corpus/ctl/ (control requests, one a line: every command,
valid and nearly so, against the hosts, files and owners fuzz_ctl.c sets
up; no capture needed).

The formats are the harnesses' (see the comment at the top of each).
"""
import hashlib
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NLM, NSM = 100021, 100024


def u32(v):
    return struct.pack(">I", v & 0xffffffff)


def u64(v):
    return struct.pack(">Q", v)


def opaque(b):
    return u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)


def call(xid, prog, vers, proc, args, auth_sys=True):
    if auth_sys:
        body = u32(0) + opaque(b"client") + u32(0) + u32(0) + u32(0)
        cred = u32(1) + opaque(body)
    else:
        cred = u32(0) + u32(0)
    return (u32(xid) + u32(0) + u32(2) + u32(prog) + u32(vers) + u32(proc)
            + cred + u32(0) + u32(0) + args)


def args_offset(msg):
    """Offset of the arguments in a call message (None: not a call)."""
    if len(msg) < 40 or struct.unpack(">I", msg[4:8])[0] != 0:
        return None
    off = 24
    for _ in range(2):
        (n,) = struct.unpack(">I", msg[off + 4:off + 8])
        off += 8 + ((n + 3) & ~3)
        if off > len(msg):
            return None
    return off


def hdr(msg):
    return struct.unpack(">IIII", msg[8:24])[1:]     # prog, vers, proc


# ---- calls from the captures ------------------------------------------

def from_captures(paths):
    """UDP calls (whole messages) and TCP payloads (record marked)."""
    udp, tcp = [], []
    for p in paths:
        out = subprocess.run(
            ["tshark", "-r", p, "-Y",
             "rpc.msgtyp==0 && (rpc.program==100021 || rpc.program==100024)",
             "-T", "fields", "-e", "udp.payload", "-e", "tcp.payload"],
            capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            u, _, t = line.partition("\t")
            if u:
                udp.append(bytes.fromhex(u.replace(":", "")))
            if t:
                tcp.append(bytes.fromhex(t.replace(":", "")))
    return udp, tcp


def records(stream):
    """Whole records of a record-marked stream."""
    out, rec, off = [], b"", 0
    while off + 4 <= len(stream):
        (m,) = struct.unpack(">I", stream[off:off + 4])
        n = m & 0x7fffffff
        rec += stream[off + 4:off + 4 + n]
        off += 4 + n
        if m & 0x80000000:
            out.append(rec)
            rec = b""
    return out


def pick(msgs, per_kind):
    """A few distinct calls of each (prog, vers, proc, length)."""
    seen, out = {}, []
    for m in msgs:
        if args_offset(m) is None:
            continue
        k = hdr(m) + (len(m),)
        if seen.get(k, 0) < per_kind:
            seen[k] = seen.get(k, 0) + 1
            out.append(m)
    return out


# ---- calls the captures lack ------------------------------------------

FH = bytes(range(32))
OH = b"oh-1234@client"


def lock4(name=b"client", fh=FH, oh=OH, svid=77, off=0, ln=100):
    return opaque(name) + opaque(fh) + opaque(oh) + u32(svid) + u64(off) \
        + u64(ln)


def lock1(name=b"client", fh=FH, oh=OH, svid=77, off=0, ln=100):
    return opaque(name) + opaque(fh) + opaque(oh) + u32(svid) + u32(off) \
        + u32(ln)


def synthesized():
    c = opaque(b"ck01")
    out = []
    x = 0x5eed0000
    for vers, lk in ((1, lock1), (3, lock1), (4, lock4)):
        a_test = c + u32(1) + lk()
        a_lock = c + u32(1) + u32(1) + lk() + u32(0) + u32(3)
        a_canc = c + u32(1) + u32(1) + lk()
        a_unl = c + lk()
        a_res = c + u32(0)
        a_tres = c + u32(1) + u32(9) + opaque(OH) + (
            u64(0) + u64(10) if lk is lock4 else u32(0) + u32(10))
        for proc, a in ((0, b""), (1, a_test), (2, a_lock), (3, a_canc),
                        (4, a_unl), (5, a_test), (6, a_test), (7, a_lock),
                        (8, a_canc), (9, a_unl), (10, a_test),
                        (11, c + u32(0)), (11, a_tres), (12, a_res),
                        (13, a_res), (14, a_res), (15, a_res),
                        (16, opaque(b"client") + u32(5) + b"p" * 16)):
            x += 1
            out.append(call(x, NLM, vers, proc, a))
        if vers >= 3:
            share = c + opaque(b"client") + opaque(FH) + opaque(OH) + \
                u32(1) + u32(3) + u32(0)
            for proc, a in ((20, share), (21, share),
                            (22, a_lock), (23, opaque(b"client") + u32(7))):
                x += 1
                out.append(call(x, NLM, vers, proc, a))
    # every bounded field at its bound (1024 bytes) and empty
    big = b"\xab" * 1024
    for name, fh, oh in ((b"n" * 1024, big, big), (b"", FH, b""),
                         (b"n" * 255, b"\1", big)):
        x += 1
        out.append(call(x, NLM, 4, 2, opaque(big) + u32(0) + u32(1) +
                        lock4(name=name, fh=fh, oh=oh) + u32(0) + u32(1)))
        x += 1
        out.append(call(x, NLM, 4, 4, opaque(b"") +
                        lock4(name=name, fh=fh, oh=oh)))
    myid = opaque(b"localhost") + u32(NLM) + u32(4) + u32(16)
    for proc, a in ((0, b""), (1, opaque(b"client")),
                    (2, opaque(b"client") + myid + b"\1" * 16),
                    (3, opaque(b"client") + myid), (4, myid), (5, b""),
                    (6, opaque(b"client") + u32(9))):
        x += 1
        out.append(call(x, NSM, 1, proc, a))
    return out


# ---- corpora ----------------------------------------------------------

def write(kind, blobs):
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    for b in blobs:
        name = hashlib.sha1(b).hexdigest()
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)
    print(f"corpus/{kind}: {len(blobs)} files, {sum(map(len, blobs))} bytes")


XDR_TYPE = {1: 2, 2: 0, 3: 3, 4: 1, 6: 2, 7: 0, 8: 3, 9: 1}


def nlmxdr_seeds(calls):
    # the framed form: type | 4, four lengths, a pool of bytes
    out = [bytes([t | 4]) + struct.pack(">HHHH", *ls) + pool
           for t in range(4)
           for ls, pool in (((4, 6, 32, 14), b"client" + bytes(range(60))),
                            ((1024, 1024, 1024, 1024), b"\x41"),
                            ((0, 0, 1, 0), b"\0"))]
    for m in calls:
        prog, vers, proc = hdr(m)
        if prog == NLM and vers == 4 and proc in XDR_TYPE:
            out.append(bytes([XDR_TYPE[proc]]) + m[args_offset(m):])
    return out


def chunked(stream, sizes):
    out, off, i = b"", 0, 0
    while off < len(stream):
        n = min(sizes[i % len(sizes)], len(stream) - off, 255)
        out += bytes([n]) + stream[off:off + n]
        off += n
        i += 1
    return out


def recmark_seeds(tcp, calls):
    out = []
    multi = sorted(tcp, key=len)[-4:]          # several records a segment
    for i, s in enumerate(multi + tcp[:4]):
        out.append(u32(4096 + i)[2:] + chunked(s, [255, 7, 100, 1, 64][i % 5:]))
    # records in two fragments, and one record over a small limit
    for m in calls[:6]:
        h = len(m) // 2
        s = u32(h) + m[:h] + u32(0x80000000 | (len(m) - h)) + m[h:]
        out.append(u32(8192)[2:] + chunked(s, [3, 50, 255]))
    big = calls[0]
    out.append(u32(64)[2:] + chunked(u32(0x80000000 | len(big)) + big,
                                      [255]))
    # a burst (pieces between two empty ones go out before the loop
    # turns): 40 NULL calls, more than a connection is served in a turn
    nulls = [call(0x7000 + i, NLM, 4, 0, b"", False) for i in range(40)]
    null = b"".join(u32(0x80000000 | len(m)) + m for m in nulls)
    out.append(u32(4096)[2:] + b"\0" + chunked(null, [255]) + b"\0")
    return out


def seq(conf, items):
    """items: (message, flags)."""
    b = bytes([conf])
    for m, fl in items:
        b += struct.pack(">HB", len(m), fl) + m
    return b


def dispatch_seeds(calls):
    out = []
    # each call alone, from a local privileged port and from afar
    for i, m in enumerate(calls):
        out.append(seq(i % 16, [(m, 8 | (0 if i % 2 else 2))]))
    c = opaque(b"ck02")
    lk = lambda **kw: lock4(**kw)
    a = lambda svid, off, ln, blk=1, excl=1, recl=0: call(
        0x1000 + svid + off, NLM, 4, 2,
        c + u32(blk) + u32(excl) + lk(svid=svid, off=off, ln=ln)
        + u32(recl) + u32(3))
    unl = lambda svid, off, ln: call(0x2000 + svid, NLM, 4, 4,
                                     c + lk(svid=svid, off=off, ln=ln))
    canc = lambda svid, off, ln: call(0x3000 + svid, NLM, 4, 3,
                                      c + u32(1) + u32(1) +
                                      lk(svid=svid, off=off, ln=ln))
    test = call(0x4000, NLM, 4, 1, c + u32(1) + lk(svid=9, off=0, ln=0))
    # a holder, a blocked waiter, a release that grants it (callback)
    out.append(seq(0, [(a(1, 0, 10), 8), (a(2, 5, 10), 8), (test, 8),
                       (unl(1, 0, 10), 8 | 0x80), (canc(2, 5, 10), 8)]))
    # the same from two hosts, one in the same turn, then a restart and
    # reclaims in grace
    out.append(seq(9, [(a(1, 0, 0), 0), (a(3, 100, 5), 3 | 8),
                       (a(4, 0, 1), 0x38),
                       (a(1, 0, 0, recl=1), 8), (a(3, 100, 5, recl=1), 0x88),
                       (test, 8)]))
    # monitor, notify, free all
    myid = opaque(b"localhost") + u32(NLM) + u32(4) + u32(16)
    mon = call(0x5000, NSM, 1, 2, opaque(b"client") + myid + b"\2" * 16)
    note = call(0x5001, NSM, 1, 6, opaque(b"client") + u32(11))
    p16 = call(0x5002, NLM, 4, 16, opaque(b"client") + u32(11) + b"\2" * 16)
    fa = call(0x5003, NLM, 4, 23, opaque(b"client") + u32(13))
    out.append(seq(1, [(a(1, 0, 10), 8), (mon, 8), (note, 8),
                       (a(1, 0, 10), 8), (p16, 8), (a(2, 0, 10), 8),
                       (fa, 8)]))
    # shares, and the _MSG forms with their _RES
    sh = call(0x6000, NLM, 4, 20, c + opaque(b"client") + opaque(FH) +
              opaque(OH) + u32(1) + u32(3) + u32(0))
    ush = call(0x6001, NLM, 4, 21, c + opaque(b"client") + opaque(FH) +
               opaque(OH) + u32(1) + u32(3) + u32(0))
    lmsg = call(0x6002, NLM, 4, 7, c + u32(1) + u32(1) + lk(svid=5) +
                u32(0) + u32(3))
    gres = call(0x6003, NLM, 4, 15, c + u32(0))
    out.append(seq(2, [(sh, 8), (sh, 8 | 1), (lmsg, 8 | 0x40), (gres, 8),
                       (ush, 8 | 0x80)]))
    return out + answer_seeds()


def reply(results=b"", stat=0):
    """An accepted reply (stat 0: SUCCESS, 1: PROG_UNAVAIL ...); the
    harness writes the xid of the call it answers over the first four
    bytes."""
    return u32(0) + u32(1) + u32(0) + u32(0) + u32(0) + u32(stat) + results


ANSWER = 0x10      # flags: an answer to outbound call (flags & 7)


def answer_seeds():
    """The server's own calls answered: a waiter on 10.0.0.2 (source 3)
    granted when the holder on 10.0.0.1 (source 2) unlocks; the look-up
    of its NLM port at its rpcbind answered, then the GRANTED callback
    (conf 1: synchronous) answered GRANTED, or DENIED (the client refuses
    the grant: the server must release the lock), or not at all; the same
    with GRANTED_MSG (conf 0) and its GRANTED_RES; a LOCK_MSG whose
    LOCK_RES needs a look-up; an IPv6 client (source 6), whose look-up is
    RPCB GETADDR with a universal address."""
    c = opaque(b"ck03")

    def lk(name, svid, fh=FH):
        return lock4(name=name, fh=fh, oh=name + b"-oh", svid=svid,
                     off=0, ln=10)

    def lock(x, name, svid, blk=1, proc=2):
        return call(x, NLM, 4, proc, c + u32(blk) + u32(1) + lk(name, svid)
                    + u32(0) + u32(3))

    def unlock(x, name, svid):
        return call(x, NLM, 4, 4, c + lk(name, svid))

    hold = lock(0x7100, b"hostA", 1)
    wait = lock(0x7101, b"hostB", 2)
    wait6 = lock(0x7102, b"hostC", 3)
    free = unlock(0x7103, b"hostA", 1)
    port = reply(u32(4045))
    granted = reply(opaque(b"cb") + u32(0))
    denied = reply(opaque(b"cb") + u32(1))
    gres = call(0x7104, NLM, 4, 15, opaque(b"cb") + u32(0))
    grant = [(hold, 2 | 8), (wait, 3 | 8), (free, 2 | 8)]
    out = [
        seq(1, grant + [(port, ANSWER | 8), (granted, ANSWER | 8),
                        (unlock(0x7105, b"hostB", 2), 3 | 8)]),
        seq(1, grant + [(port, ANSWER | 8), (denied, ANSWER | 8),
                        (lock(0x7106, b"hostA", 1, blk=0), 2 | 8)]),
        seq(1 | 4, grant + [(port, ANSWER | 8),
                            (reply(stat=1), ANSWER | 8 | 0x80),
                            (granted, ANSWER | 0xc0 | 8)]),
        seq(0, grant + [(port, ANSWER | 8), (reply(), ANSWER | 8),
                        (gres, 3 | 8)]),
        seq(2, grant + [(reply(u32(0)), ANSWER | 8 | 0x40),
                        (port, ANSWER | 0x80 | 8)]),
        seq(0, [(hold, 2 | 8), (lock(0x7107, b"hostB", 2, proc=7), 3 | 8),
                (port, ANSWER | 8), (reply(), ANSWER | 8)]),
        seq(1, [(hold, 2 | 8), (wait6, 6 | 8), (free, 2 | 8),
                (reply(opaque(b"fd00::1.15.205")), ANSWER | 8),
                (granted, ANSWER | 8)]),
        # GRANTED_MSG (conf 4: a give-up deadline of 30 s) never
        # answered: the input's last 200 s undo the grant
        seq(4, grant + [(port, ANSWER | 8)]),
        # callbacks off (conf 3) with a deadline (conf 4): the grant
        # nobody calls back is undone at the deadline
        seq(7, grant),
        # an SM_NOTIFY for hostA from its address
        seq(0, [(hold, 2 | 8), (call(0x7109, NSM, 1, 6, opaque(b"hostA") +
                                     u32(7)), 2 | 8)]),
        # a known host's LOCK with another NSM state: it restarted
        seq(0, [(hold, 2 | 8),
                (call(0x7108, NLM, 4, 2, c + u32(0) + u32(1) +
                      lk(b"hostA", 1) + u32(0) + u32(5)), 2 | 8)]),
    ]
    return out


# ---- control requests (fuzz_ctl.c) ---------------------------------------

# The names, files and owners fuzz_ctl.c's setup makes: a name with a
# blank, '%' and '=' (percent-encoded), files "f".."j" and 01ff.
ODD = "we%20ird%25%3Dname"


def ctl_seeds():
    def r(*words):
        return ("nlmctl 1 " + " ".join(words) + "\n").encode()

    one = [
        r("status"), r("status", "locks=1"),
        r("status", "host=alice", "locks=1"),
        r("status", "host=" + ODD, "locks=1"),
        r("status", "fh=66", "locks=1"), r("status", "fh=68", "locks=1",
                                           "host=carol"),
        r("status", "fh=zz"), r("status", "fh="), r("status", "host=nobody"),
        r("status", "locks=1", "dry-run=1"),
        r("release", "host=alice", "dry-run=1"), r("release", "host=alice"),
        r("release", "host=bob"), r("release", "host=" + ODD),
        r("release", "addr=10.0.0.3"), r("release", "addr=fd00::1",
                                         "dry-run=1"),
        r("release", "addr=fe80::1%25lo"), r("release", "addr=fe80::1%251"),
        r("release", "addr=fe80::1%25nosuchif"),
        r("release", "addr=not-an-addr"),
        r("release", "fh=66"), r("release", "fh=66", "dry-run=1"),
        r("release", "fh=01ff"), r("release", "fh=6"),
        r("release", "owner=alice:1:6f776e"),
        r("release", "owner=alice:1:6f776e", "dry-run=1"),
        r("release", "owner=" + ODD + ":-5:"), r("release", "owner=dave:9:64"),
        r("release", "owner=alice:4294967297:6f776e"),
        r("release", "owner=alice::6f776e"), r("release", "owner=alice"),
        r("release", "owner=:1:"), r("release", "host=alice", "fh=66"),
        r("release"), r("release", "dry-run=%31", "host=alice"),
        r("release", "dry-run=0", "dry-run=1", "host=alice"),
        r("grace-end"), r("grace-end") + r("grace-end"), r("metrics"),
        r("status", "locks=1") + r("release", "fh=68") +
        r("status", "locks=1"),
        r("release", "host=carol") + r("status", "locks=1"),
        r("grace-end") + r("status", "locks=1") +
        r("release", "owner=alice:1:6f776e"),
        r("release", "fh=66", "dry-run=1") + r("release", "fh=66") +
        r("release", "fh=66"),
    ]
    near = [
        b"nlmctl 2 status\n", b"nlmctl 1 STATUS\n",
        b"nlmctl 1 status host\n", b"nlmctl 1 status host=a%zz\n",
        b"nlmctl 1 status host=a%00b\n", b"nlmctl 1 unknown\n",
        b"nlmctl\n", b"\n", b"nlmctl 1 status\0\n", b"foo 1 status\n",
        r("status", *["k=v"] * 17), b"nlmctl 1 status",
        b"nlmctl  1   status    locks=1\n",
        b"nlmctl 1 status host=" + b"a" * 4074 + b"\n",
        b"nlmctl 1 status host=" + b"a" * 4075 + b"\n",
        b"nlmctl 1 status host=" + b"b" * 5000,
    ]
    return one + near


def main():
    if sys.argv[1:] == ["--ctl"]:
        write("ctl", ctl_seeds())
        return
    udp, tcp = from_captures(sys.argv[1:])
    tcp_calls = [r for s in tcp for r in records(s)]
    captured = pick(udp + tcp_calls, 2)
    calls = captured + synthesized()
    print(f"captures: {len(udp)} UDP calls, {len(tcp)} TCP segments; "
          f"kept {len(captured)}")
    write("nlmxdr", nlmxdr_seeds(calls))
    write("recmark", recmark_seeds(tcp, calls))
    write("dispatch", dispatch_seeds(calls))


if __name__ == "__main__":
    main()
