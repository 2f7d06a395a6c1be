#!/usr/bin/env node
// Writes mcp.json, the MCP host entry for this checkout, at `npm install` (postinstall). Hosts start
// commands from their own working directory, so the entry names this checkout's bin/booking.js and the
// Node.js that built its native modules by absolute path; it works from any directory, on the
// project's db/booking.sqlite unless DATABASE_URL says otherwise. The key stays a ${...} placeholder
// that hosts such as Claude Code expand from the environment. The file is generated, so it is not in
// git: a committed copy would name one machine's paths.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = {
  mcpServers: {
    booking: {
      command: process.execPath,
      args: [path.join(root, 'bin', 'booking.js'), 'mcp'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the host expands it, not JavaScript.
      env: { BOOKING_API_KEY: '${BOOKING_API_KEY}' },
    },
  },
};
writeFileSync(path.join(root, 'mcp.json'), `${JSON.stringify(entry, null, 2)}\n`);
