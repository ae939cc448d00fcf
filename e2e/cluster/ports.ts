import net from 'node:net';

/**
 * Asks the kernel for `count` distinct free loopback ports: all listeners stay open until every
 * port is read, so the same port cannot come back twice. Another process may still take one
 * before we bind it; callers retry once on "address already in use".
 */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => listenOnAnyPort()));
  const ports = servers.map((server) => {
    const address = server.address();
    if (address === null || typeof address === 'string') {
      throw new Error('a TCP listener on 127.0.0.1 reported no port');
    }
    return address.port;
  });
  await Promise.all(servers.map((server) => closeServer(server)));
  return ports;
}

export async function freeLoopbackPort(): Promise<number> {
  const [port] = await freeLoopbackPorts(1);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}

function listenOnAnyPort(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      resolve(server);
    });
  });
}

function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => {
      if (error) reject(error);
      else resolve();
    });
  });
}

/** Resolves true when something accepts TCP connections on 127.0.0.1:port. */
export function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}
