"""An OpenStack-like service on oslo.messaging, driven by e2e/oslo-messaging.itest.ts.

The transport URL comes from the environment as oslo.config reads it (OS_DEFAULT__TRANSPORT_URL), never
from the command line. Modes:

  serve TAG   an RPC server (topic e2e-TAG) and a notification listener (topic e2e-TAG-notifications);
              prints {"ready": true}, then answers one JSON line per request line on stdin:
                {"op": "call", "text": T[, "topic": other TAG]}  an RPC call with a reply
                {"op": "notify", "text": T}  a notification, answered once the listener received it
                {"op": "stop"}  the process exits, its connections dropped
  probe       one fresh connection (a cast, no retry); prints {"ok": ...} or the refusal's class and text.

Answers are {"ok": true, ...} or {"ok": false, "error": class, "message": text}.
"""
import json
import os
import queue
import sys

from oslo_config import cfg
import oslo_messaging as messaging

# oslo.messaging 18 registers its tracing options on the global CONF only: a service uses that one.
CONF = cfg.CONF


def say(**answer):
    print(json.dumps(answer), flush=True)


def failure(error):
    return {"ok": False, "error": type(error).__name__, "message": str(error)}


class Echo:
    def __init__(self, tag):
        self.tag = tag

    def echo(self, ctxt, text):
        return {"text": text, "server": self.tag}


class Listener:
    def __init__(self):
        self.received = queue.Queue()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.put({"event_type": event_type, "payload": payload})
        return messaging.NotificationResult.HANDLED


def serve(tag):
    transport = messaging.get_rpc_transport(CONF)
    notifications = messaging.get_notification_transport(CONF)
    server = messaging.get_rpc_server(
        transport, messaging.Target(topic=f"e2e-{tag}", server=tag), [Echo(tag)], executor="threading"
    )
    listener = Listener()
    targets = [messaging.Target(topic=f"e2e-{tag}-notifications")]
    notification_listener = messaging.get_notification_listener(
        notifications, targets, [listener], executor="threading"
    )
    notifier = messaging.Notifier(
        notifications, publisher_id=f"e2e.{tag}", driver="messaging", topics=[f"e2e-{tag}-notifications"]
    )
    server.start()
    notification_listener.start()
    say(ready=True)
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "stop":
            break
        try:
            if op == "call":
                target = messaging.Target(topic=f"e2e-{request.get('topic', tag)}")
                client = messaging.get_rpc_client(transport, target, timeout=10)
                say(ok=True, reply=client.call({}, "echo", text=request["text"]))
            elif op == "notify":
                notifier.info({}, "e2e.ping", {"text": request["text"]})
                say(ok=True, received=listener.received.get(timeout=10))
            else:
                say(ok=False, error="UnknownOp", message=op)
        except Exception as error:  # noqa: BLE001 - every failure is an answer
            say(**failure(error))
    say(stopped=True)


def probe():
    transport = messaging.get_rpc_transport(CONF)
    client = messaging.get_rpc_client(transport, messaging.Target(topic="e2e-probe"), retry=0)
    try:
        client.cast({}, "echo", text="probe")
        say(ok=True)
    except Exception as error:  # noqa: BLE001
        say(**failure(error))


if __name__ == "__main__":
    CONF([], project="e2e")
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        probe()
    # Stopped as a killed pod would be: oslo's threads would keep the interpreter alive.
    os._exit(0)
