import type { z } from 'zod';
import type { BadArgument, FailureMember, ToolContext } from './tool-kit.ts';

/**
 * Hints to a host about what a tool does (MCP's tool annotations), written here rather than imported
 * so that the tools do not depend on the SDK's version: only build-server.ts speaks to the SDK.
 */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * One MCP tool: its contract (name, input and output schemas, annotations) and its work. The work
 * returns the success payload; `ok`, failures and the MCP result shape are added by the server.
 */
export interface ToolSpec<
  In extends z.ZodRawShape = z.ZodRawShape,
  Out extends z.ZodRawShape = z.ZodRawShape,
> {
  name: string;
  title: string;
  description: string;
  input: In;
  /** The payload of a success (outputSchema adds ok, code, hint and the rest). */
  output: Out;
  annotations: ToolAnnotations;
  /** What its ok-false answers may carry besides code, hint and detail (tool-kit.ts); none when absent. */
  failureMembers?: readonly FailureMember[];
  /**
   * The paths of its answer that may hold text callers or customers wrote ("booking.notes",
   * "upcoming_bookings[].client_name"; caller-text.ts): its output schema gains `caller_supplied`,
   * and each answer lists there those that hold some.
   */
  callerSupplied?: readonly string[];
  /**
   * When the schema refuses some arguments: the problems of those it took (`given`, any of them
   * absent, nested objects in part) that no location would read either (a date, a time, a start, a
   * phone or an e-mail that means nothing), in the words `run` refuses them with, so that one answer
   * names every bad argument (design.md 9.3). Run with no context: nothing is asked of the engine.
   */
  formProblems?(given: Readonly<Record<string, unknown>>): BadArgument[];
  run(args: z.infer<z.ZodObject<In>>, context: ToolContext): Promise<z.infer<z.ZodObject<Out>>>;
}

/** Keeps a tool's types while listing it among tools of other shapes. */
export function defineTool<In extends z.ZodRawShape, Out extends z.ZodRawShape>(
  spec: ToolSpec<In, Out>,
): ToolSpec {
  return spec as unknown as ToolSpec;
}

/** idempotentHint and destructiveHint mean something only when readOnlyHint is false (MCP): not sent. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
