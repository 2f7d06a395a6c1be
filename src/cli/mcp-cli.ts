import { Command } from 'commander';
import { addMcpCommand, runProgram } from './mcp-program.ts';
import { postgresTrouble } from './postgres-trouble.ts';

/**
 * The command line `booking mcp` runs (bin/booking.js): the whole one's `mcp` command alone, without
 * the other commands' modules, which an MCP host would otherwise wait for before its first answer
 * (docs/decisions/stdio-first-answer.md).
 */
const program = new Command('booking').showHelpAfterError();
addMcpCommand(program);

export async function runCli(argv: string[]): Promise<void> {
  await runProgram(program, argv, (error) => postgresTrouble(error, process.env.DATABASE_URL?.trim()));
}
