/**
 * A TCP proxy on 127.0.0.1 in front of a service (DynamoDB Local, moto) that a test can pause,
 * slow or cut at a moment of its choosing, as a store paused mid-request is: while paused, bytes
 * in both directions are held (not lost) and flow again on `resume`, so a request the client gave
 * up on may still reach the store afterwards, exactly as with a paused JVM.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: give this to the client instead of the service's URL. */
  readonly url: string;
  /** Holds every byte, both ways, until `resume`. */
  pause(): void;
  resume(): void;
  /** Delays every chunk by `milliseconds` (0: none). */
  slow(milliseconds: number): void;
  /** Closes every open connection (new ones still connect). */
  cut(): void;
  stop(): Promise<void>;
}

/** Starts a proxy to `target` (`http://host:port`) on a free port of 127.0.0.1. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let delay = 0;
  /** Settles when the proxy is not paused: at once, or at the next `resume`. */
  let flowing: Promise<void> = Promise.resolve();
  let release: (() => void) | undefined;

  /** Bytes from `from` to `to`, in order, each chunk after the delay and while not paused. */
  const relay = (from: Socket, to: Socket) => {
    let queue = Promise.resolve();
    const after = (step: () => void) => {
      queue = queue.then(async () => {
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        await flowing;
        step();
      });
    };
    from.on('data', (chunk: Buffer) => after(() => to.destroyed || to.write(chunk)));
    from.on('end', () => after(() => to.end()));
    from.on('error', () => to.destroy());
    from.on('close', () => after(() => to.destroy()));
  };

  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy has no port.');
  return {
    url: `http://127.0.0.1:${address.port}`,
    pause: () => {
      if (release !== undefined) return;
      flowing = new Promise((resolve) => {
        release = resolve;
      });
    },
    resume: () => {
      release?.();
      release = undefined;
    },
    slow: (milliseconds) => {
      delay = milliseconds;
    },
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    stop: async () => {
      release?.();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
