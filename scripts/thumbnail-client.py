#!/usr/bin/env python3
"""A client of the Thumbnail Management D-Bus Specification (org.freedesktop.thumbnails.Thumbnailer1 and Cache1),
written with jeepney, independent of Darkroom's own D-Bus code: the tests' and the benchmark's second client.

    thumbnail-client.py ADDRESS SPEC.json

SPEC is a list of calls made in order, each {"method": NAME, "args": [...], "signature": "..."} on Thumbnailer1
(Queue, Dequeue, GetSupported, GetFlavors, GetSchedulers) or, with "object": "Cache1", on Cache1. In a Dequeue's
args, {"handle_of": i} stands for the handle call i returned. Prints one JSON object: each call's reply (or error
name and message), and every Thumbnailer1 signal received until each queued handle has had Finished (or "timeout"
seconds, default 60, passed), with its time in seconds since the first call. {"sleep": S} in the list waits S
seconds, receiving signals, before the next call.
"""
import json
import sys
import time

from jeepney import DBusAddress, MatchRule, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
from jeepney.low_level import HeaderFields, MessageType
from jeepney.wrappers import DBusErrorResponse

NAME = "org.freedesktop.thumbnails.Thumbnailer1"
OBJECTS = {
    "Thumbnailer1": DBusAddress("/org/freedesktop/thumbnails/Thumbnailer1", bus_name=NAME, interface=NAME),
    "Cache1": DBusAddress("/org/freedesktop/thumbnails/Cache1", bus_name="org.freedesktop.thumbnails.Cache1",
                          interface="org.freedesktop.thumbnails.Cache1"),
}


def main():
    address, spec_path = sys.argv[1], sys.argv[2]
    with open(spec_path) as f:
        spec = json.load(f)
    calls = spec["calls"] if isinstance(spec, dict) else spec
    timeout = spec.get("timeout", 60) if isinstance(spec, dict) else 60
    conn = open_dbus_connection(bus=address)
    rule = MatchRule(type="signal", interface=NAME, path="/org/freedesktop/thumbnails/Thumbnailer1")
    conn.send_and_get_reply(message_bus.AddMatch(rule))
    signals = []
    replies = []
    handles = set()
    finished = set()
    start = time.monotonic()
    with conn.filter(rule, bufsize=10_000_000) as queue:
        def record(message):
            body = message.body
            member = message.header.fields[HeaderFields.member]
            entry = {"t": time.monotonic() - start, "signal": member, "handle": body[0]}
            if member == "Ready":
                entry["uris"] = list(body[1])
            elif member == "Error":
                entry["uris"], entry["code"], entry["message"] = list(body[1]), body[2], body[3]
            elif member == "Finished":
                finished.add(body[0])
            signals.append(entry)

        def take():
            while queue:
                record(queue.popleft())

        def wait(seconds):
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                try:
                    record(conn.recv_until_filtered(queue, timeout=max(0.001, until - time.monotonic())))
                except TimeoutError:
                    break
            take()

        for call in calls:
            if "sleep" in call:
                wait(call["sleep"])
                replies.append({"slept": call["sleep"]})
                continue
            args = [replies[a["handle_of"]]["reply"][0] if isinstance(a, dict) else a for a in call.get("args", [])]
            message = new_method_call(OBJECTS[call.get("object", "Thumbnailer1")], call["method"],
                                      call.get("signature") or None, tuple(args))
            sent = time.monotonic() - start
            reply = conn.send_and_get_reply(message, timeout=timeout)
            if reply.header.message_type == MessageType.error:
                error = DBusErrorResponse(reply)
                replies.append({"error": error.name, "message": str(error.data[0]) if error.data else "", "t": sent})
            else:
                replies.append({"reply": list(reply.body), "t": sent})
                if call["method"] == "Queue":
                    handles.add(reply.body[0])
            take()
        deadline = time.monotonic() + timeout
        while not handles <= finished and time.monotonic() < deadline:
            try:
                # The message that ends the wait is taken off the queue and returned
                record(conn.recv_until_filtered(queue, timeout=max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                break
            take()
    print(json.dumps({"replies": replies, "signals": signals, "complete": handles <= finished}))


if __name__ == "__main__":
    main()
