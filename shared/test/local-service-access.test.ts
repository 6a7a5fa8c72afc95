import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { answers } from '../src/local-service-access.js';

describe('an endpoint that answers', () => {
  it('is told from one where nothing listens', async () => {
    const server = createServer((_request, response) => response.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      expect(await answers(`http://127.0.0.1:${port}`)).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await answers(`http://127.0.0.1:${port}`)).toBe(false);
  });
});
