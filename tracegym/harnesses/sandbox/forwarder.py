"""Inside a sandbox without a network: a port of its own loopback that leads to one Unix socket of the host.

It runs as `python3 -I -S forwarder.py SOCKET` (stdlib only, Python 3.8 or later:
the docker image's Python may be older than tracegym's). It listens on a free
port of 127.0.0.1, prints the port on stdout and returns (exit 0) once
connections are accepted, leaving a child process that pipes each connection
to SOCKET. So a shell can start it and know where to connect:

    port=$(python3 -I -S /path/forwarder.py /path/proxy.sock) || exit 125

A half-close is passed on in both directions and a reset closes both sides, so
the far end sees the client hang up just as if it had connected directly. The
child stays in the caller's process group and dies with the sandbox.
"""

import os
import socket
import sys

_CHUNK = 1 << 16


def _serve_forever(listener, path):
    # asyncio is imported here, in the child, after the port is out: its ~50 ms of loading then overlap the
    # agent's own start instead of delaying it (connections wait in the listen backlog meanwhile).
    import asyncio

    async def pipe(reader, writer, other):
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except OSError:  # a reset on either side: the other side is dropped too
            writer.transport.abort()
            other.transport.abort()

    async def connection(client_reader, client_writer):
        try:
            reader, writer = await asyncio.open_unix_connection(path)
        except OSError as exc:
            sys.stderr.write("tracegym forwarder: cannot reach %s: %s\n" % (path, exc))
            client_writer.transport.abort()
            return
        await asyncio.gather(pipe(client_reader, writer, client_writer), pipe(reader, client_writer, writer))
        client_writer.close()
        writer.close()

    async def serve():
        server = await asyncio.start_server(connection, sock=listener)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


def main(argv):
    path = argv[1]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    if os.fork() > 0:
        os.write(1, b"%d\n" % listener.getsockname()[1])
        os._exit(0)
    # The shell reads the port until stdout closes: the child must not hold it open.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    _serve_forever(listener, path)


if __name__ == "__main__":
    main(sys.argv)
