import type { Command } from 'commander';
import { CommandError, err } from './output.ts';

/**
 * `booking mcp`'s definition, shared by the whole command line (src/cli.ts) and the entry `booking mcp`
 * runs on its own (src/cli/mcp-cli.ts), so that both parse and explain it alike.
 */
export function addMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('Serve the MCP tools over stdio for the organisation of BOOKING_API_KEY (logs on stderr)')
    .option('--base-url <url>', 'drive a remote instance through its REST API, e.g. https://salon.example/v1')
    .addHelpText(
      'after',
      "\nWithout --base-url the tools run on this machine's database (DATABASE_URL); payment links use\n" +
        'PUBLIC_BASE_URL. See docs/mcp.md.',
    )
    .action(async (options: { baseUrl?: string }) => {
      const { serveMcpOverStdio } = await import('./mcp-command.ts');
      await serveMcpOverStdio(options);
    });
}

/**
 * Runs `program` on `argv`; a command that fails says why on stderr and exits with status 1, in the
 * words of `explain` where it has some for the error.
 */
export async function runProgram(
  program: Command,
  argv: string[],
  explain: (error: unknown) => string | null = () => null,
): Promise<void> {
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommandError) {
      err(`error: ${error.message}`);
      for (const line of error.details) err(`  ${line}`);
    } else {
      err(`error: ${explain(error) ?? (error instanceof Error ? error.message : String(error))}`);
      if (process.env.LOG_LEVEL === 'debug' && error instanceof Error && error.stack) err(error.stack);
    }
    process.exitCode = 1;
  }
}
