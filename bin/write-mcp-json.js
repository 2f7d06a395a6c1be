#!/usr/bin/env node
// Writes mcp.json, the MCP host entry for this checkout, at `npm install` (postinstall). Hosts start
// commands from their own working directory, so the entry names this checkout's bin/booking.js and the
// Node.js that built its native modules by absolute path; it works from any directory, on the
// project's db/booking.sqlite unless DATABASE_URL says otherwise. The key stays a ${...} placeholder
// that hosts such as Claude Code expand from the environment. Besides the key, `booking mcp` needs what
// makes its answers those of the server (docs/decisions/stdio-settings-from-mcp-json.md): the payment
// provider, `local` as `npm start` chooses, and the public base URL its links start with, the address
// `npm start` prints (http://127.0.0.1:8080, or PORT's); PAYMENT_PROVIDER, PUBLIC_BASE_URL and PORT
// set when npm install runs are written instead. The file is generated, so it is not in git: a
// committed copy would name one machine's paths.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = {
  mcpServers: {
    booking: {
      command: process.execPath,
      args: [path.join(root, 'bin', 'booking.js'), 'mcp'],
      env: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the host expands it, not JavaScript.
        BOOKING_API_KEY: '${BOOKING_API_KEY}',
        PAYMENT_PROVIDER: process.env.PAYMENT_PROVIDER?.trim() || 'local',
        PUBLIC_BASE_URL:
          process.env.PUBLIC_BASE_URL?.trim() || `http://127.0.0.1:${process.env.PORT?.trim() || 8080}`,
      },
    },
  },
};
// Another file than the project's mcp.json when named (tests write one for a server on another port).
const file = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'mcp.json');
writeFileSync(file, `${JSON.stringify(entry, null, 2)}\n`);
