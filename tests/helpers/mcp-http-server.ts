/**
 * An HTTP MCP server for the engine tests, on the official TypeScript SDK's Streamable HTTP transport (stateless: a
 * server and a transport per request), listening on the host's 127.0.0.1 in the test process. It answers only
 * requests carrying `Authorization: Bearer <token>` (401 otherwise), and counts every request and every `echo` call.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

/** A running HTTP MCP server. */
export interface HttpMcpServer {
  /** Its URL: `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Every request, with whether its bearer token was the right one. */
  requests: Array<{ method: string; authorized: boolean }>;
  /** The texts of every `echo` call, in order. */
  calls: string[];
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1, port 0 (the kernel's choice), accepting only `token`. */
export async function startHttpMcpServer(token: string): Promise<HttpMcpServer> {
  const requests: HttpMcpServer['requests'] = [];
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    const authorized = req.headers.authorization === `Bearer ${token}`;
    requests.push({ method: req.method ?? '', authorized });
    if (!authorized) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const mcp = new McpServer({ name: 'agent-harness-http-echo', version: '1.0.0' });
    mcp.registerTool(
      'echo',
      { description: 'Echo the given text back.', inputSchema: { text: z.string().describe('the text to echo') } },
      async ({ text }) => {
        calls.push(text);
        return { content: [{ type: 'text', text: `echo: ${text}` }] };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
