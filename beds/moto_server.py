"""moto's server, with the thread races of its SQS that the test beds meet fixed (moto 5.2.1 to
5.2.5 have them): `python moto_server.py -H 127.0.0.1 -p <port>`, the arguments of `moto_server`.

moto serves each request on a thread of its own, and its SQS shares a queue's messages between
them with one lock that not every path takes:

- `SendMessageBatch` puts a message on the queue (waking long polls), then sets `user_id` on it:
  a receiver copying the message meanwhile fails with "dictionary changed size during
  iteration", answers 500, and the message stays invisible for the visibility timeout, though
  nobody got it (a live webhook waited 180 s in a test bed). The attribute is set at creation.
- `DeleteMessage` rebuilds the queue's list without the lock: a message sent meanwhile is lost.
- `ReceiveMessage` marks messages received without the lock: two pollers can get one message.

`PLANT_STORE_MOTO_UNPATCHED=1` runs moto as it is (to show a race again).
"""
import functools
import os
import sys

from moto.server import main
from moto.sqs import models


def _patch() -> None:
    created = models.Message.__init__

    @functools.wraps(created)
    def message_init(self, *args, **kwargs):
        created(self, *args, **kwargs)
        self.user_id = None

    models.Message.__init__ = message_init

    deleting = models.Queue.delete_message

    @functools.wraps(deleting)
    def delete_message(self, *args, **kwargs):
        with self._messages_lock:
            return deleting(self, *args, **kwargs)

    models.Queue.delete_message = delete_message

    receiving = models.SQSBackend.receive_message

    @functools.wraps(receiving)
    def receive_message(self, queue_name, *args, **kwargs):
        # The queue's lock is reentrant, and a long poll's wait releases it while it waits.
        with self.get_queue(queue_name)._messages_lock:
            return receiving(self, queue_name, *args, **kwargs)

    models.SQSBackend.receive_message = receive_message


if __name__ == "__main__":
    if os.environ.get("PLANT_STORE_MOTO_UNPATCHED") != "1":
        _patch()
    sys.exit(main(sys.argv[1:]))
