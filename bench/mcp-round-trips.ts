import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Principal } from '../src/app/api-key-service.ts';
import { ManualClock } from '../src/app/clock.ts';
import { type AppDeps, createAppDeps } from '../src/app/deps.ts';
import type { PaymentProvider } from '../src/app/payment-provider.ts';
import { localCheckout } from '../src/app/payments.ts';
import { addDays } from '../src/domain/availability/zone-calendar.ts';
import { localDateAt } from '../src/domain/time-format.ts';
import { callTool } from '../src/mcp/build-server.ts';
import { InProcessBookingApi, principalOfKey } from '../src/mcp/in-process-api.ts';
import { resolveLocation, resolveServices } from '../src/mcp/resolution.ts';
import { ToolFailure, toolResult } from '../src/mcp/tool-kit.ts';
import type { ToolSpec } from '../src/mcp/tool-spec.ts';
import { bookTool } from '../src/mcp/tools/booking-tools.ts';
import { findSlotsTool } from '../src/mcp/tools/find-slots.ts';
import type { BenchContext, Benchmark, Timing } from './lib/benchmark.ts';
import { LOAD_CPU, PINNING, SERVER_CPU } from './lib/cpu-pinning.ts';
import { describeQuestion, type LargestAnswer, largestFindSlotsAnswer } from './lib/find-slots-sizes.ts';
import { nodeHttpFetch } from './lib/http-request.ts';
import { createMcpBenchDatabase, MCP_SCENARIO, WARM_UP } from './lib/mcp-database.ts';
import { type ServerProcess, startServerProcess } from './lib/server-process.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';
import type { McpServerInfo } from './mcp-server.ts';

const SERVER = new URL('./mcp-server.ts', import.meta.url);
/** Timed calls per row: this many per second of --duration, and never fewer than MIN_CALLS. */
const CALLS_PER_SECOND = 100;
const MIN_CALLS = 200;
/**
 * Untimed find_slots calls per side after the comparison calls (which are untimed too). The server's
 * CPU per call falls by half over its first two thousand or so, as V8 optimises the path: a server
 * answering calls all day runs warm, so that is what is timed.
 */
const FIND_WARM_UP = 1_000;
/**
 * Untimed bookings per side before the timed ones, at the scenario's warm-up location (WARM_UP), so
 * they take none of the timed slots, of which the demo diaries hold few: the server's booking path is
 * warmed as find_slots' is.
 */
const BOOK_WARM_UP = 100;
/** Each row is timed in this many blocks, the sides alternating, so noise of the machine falls on both. */
const ROUNDS = 2;
/** find_slots asks about the afternoons of this many weeks from today (Sundays left out: Camden is shut). */
const FIND_WEEKS = 4;
/**
 * The issue's targets for a round trip over Streamable HTTP, on either protocol generation: p50 under
 * 3 ms for both tools; p99 under 8 ms for find_slots (issue 47, "cost per request": it was 15) and
 * still under 15 ms for book, whose commit waits for one disk sync (docs/decisions/mcp-round-trip-floor.md).
 */
const TARGET_P50_MS = 3;
const TARGET_P99_MS = { find_slots: 8, book: 15 } as const;
/** availability answers at most this many days at once. */
const AVAILABILITY_DAYS = 14;
const CLIENT_INFO = { name: 'bench-agent', version: '1.0.0' };

// biome-ignore lint/suspicious/noExplicitAny: tool answers are JSON; the benchmark reads a few fields.
type Json = any;
type Args = Record<string, unknown>;

/** One way of calling a tool: over Streamable HTTP in one protocol generation, or its work in this process. */
interface Side {
  name: string;
  /** Over HTTP: the stateless 2026-07-28 protocol, or the 2025 one (an initialize handshake first). */
  era?: 'modern' | 'legacy';
  /** The tool's answer as an agent reads it: { ok, … }; an MCP error result throws. */
  call(tool: ToolSpec, args: Args): Promise<Json>;
}

/**
 * The issue's MCP benchmark: find_slots and book round trips through the MCP SDK's own client over
 * Streamable HTTP to the full stack in a child process, one call at a time, against the same tool work
 * called in this process without MCP or HTTP, on the demo catalogue with a fixed clock.
 */
export const mcpRoundTrips: Benchmark = {
  id: 'mcp-round-trips',
  async run(context) {
    const calls = Math.max(MIN_CALLS, Math.round(CALLS_PER_SECOND * context.durationS));
    context.progress(
      'importing the demo catalogue into two temporary SQLite databases, starting the server…',
    );
    const local = await createMcpBenchDatabase();
    let server: ServerProcess<McpServerInfo> | undefined;
    const clients: Client[] = [];
    const agents: http.Agent[] = [];
    const sizes: AnswerSizes = { toolsList: 0, findSlots: 0, largestFind: undefined, book: 0, held: 0 };
    try {
      server = await startServerProcess<McpServerInfo>(SERVER, null, {
        cpuProfileDir: context.cpuProfileDir,
        serveSettings: true,
      });
      const { origin, writeKey } = server.info;
      if (server.info.clientId !== local.clientId)
        throw new Error('The two databases disagree on the demo client’s id.');

      const deps = createAppDeps({
        db: local.database.db,
        clock: new ManualClock(MCP_SCENARIO.now),
        secret: randomBytes(32).toString('base64url'),
      });
      const principal = await principalOfKey(deps, local.writeKey);
      const inProcess: Side = {
        name: 'in process',
        async call(tool, args) {
          try {
            const api = await InProcessBookingApi.forToolCall(deps, principal, { publicBaseUrl: origin });
            return { ok: true, ...(await tool.run(args as never, { api })) };
          } catch (error) {
            if (error instanceof ToolFailure) return { ok: false, code: error.code, hint: error.hint };
            throw error;
          }
        },
      };

      const overHttp = await Promise.all(
        (['modern', 'legacy'] as const).map(async (era) => {
          const client = new Client(CLIENT_INFO, {
            versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' },
          });
          clients.push(client);
          const agent = new http.Agent({ keepAlive: true });
          agents.push(agent);
          await client.connect(
            new StreamableHTTPClientTransport(new URL('/mcp', origin), {
              requestInit: { headers: { Authorization: `Bearer ${writeKey}` } },
              fetch: nodeHttpFetch(agent),
            }),
          );
          if (client.getProtocolEra() !== era) throw new Error(`The ${era} client negotiated another era.`);
          // As a host does once connected; the client then checks every answer against its output schema.
          const listed = await client.listTools();
          sizes.toolsList = JSON.stringify(listed).length;
          for (const tool of [findSlotsTool, bookTool]) {
            if (!listed.tools.some((t) => t.name === tool.name))
              throw new Error(`No tool ${tool.name} listed.`);
          }
          return httpSide(client, era, sizes);
        }),
      );
      const sides = [...overHttp, inProcess];

      const find = await timeFindSlots(context, sides, calls);
      context.progress('book: planning distinct free slots over the advance window…');
      const planned = await planSlots(deps, principal, MCP_SCENARIO.location);
      const elsewhere = await planSlots(deps, principal, WARM_UP.location);
      const warmUpSlots = elsewhere.slots.filter((slot) => slot.staffName === WARM_UP.staffName);
      const book = await timeBook(context, sides, calls, planned, warmUpSlots, local.clientId);
      sizes.held = await heldBookingSize();
      context.progress('find_slots: the largest five-slot answer of the demo catalogue…');
      sizes.largestFind = await largestFindSlotsSize();
      const timings = [...find.timings, ...book.timings];
      const answers = timings.reduce((n, t) => n + t.calls, 0) + find.untimed + book.untimed;
      const [findModern, findLegacy, findLocal] = find.timings as [Timing, Timing, Timing];
      const [bookModern, bookLegacy, bookLocal] = book.timings as [Timing, Timing, Timing];

      return {
        kind: 'timing',
        subject: 'tools/call find_slots and book',
        setting: {
          heading: 'over Streamable HTTP (protocols 2026-07-28 and 2025-11-25) and in process',
          detail:
            'the server in a child process, the MCP clients and the in-process calls in the runner process',
        },
        method: [
          `Data: the project's demo catalogue (\`db/demo-catalogue.json\`: Northside Hair Co., whose Camden location has two active staff, Amara Okafor Monday to Friday and Ben Carter Tuesday, Thursday and Saturday, a 15-minute grid, 60 minutes' notice and ${book.windowDays} days' advance booking; "Cut & blow-dry" takes 60 minutes plus a ${book.bufferMinutes}-minute buffer), imported into a fresh temporary SQLite file with a \`read_write\` key whose own limit (10⁹ a minute) is far above the load, so every call is counted against it but none is refused. The server and the in-process side each have their own such file (same ids: they derive from the catalogue's refs), and both clocks are fixed at ${MCP_SCENARIO.now.replace('T', ' ').replace(':00Z', ' UTC')}, a Monday morning, so all sides answer the same questions with the same data.`,
          `Over Streamable HTTP: the real app (\`buildApp\` with the production dependencies of \`src/runtime.ts\` but that fixed clock, no logger, \`NODE_ENV=production\`) listens on 127.0.0.1 in a child process (\`bench/mcp-server.ts\`)${PINNING ? ` pinned to core ${SERVER_CPU}` : ''}. In the runner process${PINNING ? `, pinned to core ${LOAD_CPU}` : ''}, two clients of the MCP TypeScript SDK 2.x (\`@modelcontextprotocol/client\`, \`StreamableHTTPClientTransport\`, header \`Authorization: Bearer <key>\`, and as \`fetch\` node:http with a keep-alive agent: \`nodeHttpFetch\` of \`bench/lib/http-request.ts\`, because with Node's own fetch the runner spent more CPU per call than the server and its young collections paused it 5 to 11 ms every twenty calls or so, inside the calls timed): one pinned to protocol 2026-07-28 (stateless: \`server/discover\` once, then every request carries its own protocol version and capabilities), one in legacy mode (the 2025 \`initialize\` handshake, protocol 2025-11-25). Each connects once and lists the tools, as a host does, after which the client checks every answer against the tool's output schema. Each timed call is one \`client.callTool\`, one at a time (latency of a single call on an idle server, not throughput), timed with \`performance.now()\` from the call to its parsed and checked result: a POST /mcp that passes the host check and authenticates the key before its body is read (one SQLite query), the direct lane of POST /mcp (\`src/http/mcp-direct-lane.ts\`: a well-formed tools/call, recognised with the SDK's own classifier, answered with the bytes the SDK's handler would send but without building a server, a transport and web Request and Response objects for it; anything else goes to the SDK's handler of that protocol generation with a fresh stateless server), validation of the arguments, the tool's work, and the JSON response back.`,
          `In process (the baseline): the very same tool work in the runner process on its own database, without MCP or HTTP: per call, \`InProcessBookingApi.forToolCall\` (the key's rate-limit count) and the tool spec's \`run(args, { api })\` (\`findSlotsTool\`, \`bookTool\` of \`src/mcp/tools/\`) with the same arguments, timed the same way. It leaves out the transport (HTTP, JSON-RPC, serialisation both ways), the key's authentication (the principal is resolved once, before timing), the server built per request, argument validation and the ok/JSON wrapping of the result. So the difference between the rows is what MCP over Streamable HTTP adds to a call.`,
          `find_slots: \`{ location: "camden", services: "cut", date, time_of_day: "afternoon" }\`, the date cycling through the ${find.dates} days of the next ${FIND_WEEKS} weeks from today on which Camden opens (every day but Sunday, YYYY-MM-DD), so the answers differ (one or two staff, today's notice, the days of the week) though the diaries are empty. Each call resolves the location, the service and the team by name against the catalogue listings (read from SQLite once per catalogue version and shared by the calls that follow, as in a running server, which also remember how each wording matched), reads the organisation's catalogue and bookings versions (one SQLite query) to reuse the availability answer of the day while nothing it depends on has changed (as REST availability does: \`src/app/availability-cache.ts\`; the first call of each day loads it from SQLite and runs the engine), and words up to 5 slots for speech. Before timing, each of the ${find.dates} questions is asked of every side and the answers must be identical (the whole answer, slots and spoken words included: they are); then ${FIND_WARM_UP} untimed calls per side, then ${findModern.calls} timed calls per side in ${ROUNDS} alternating blocks (2026-07-28, 2025-11-25, in process, and again). Every answer must be ok with at least one slot, or the benchmark does not run.`,
          `book: each call books a distinct free slot with \`{ location: "camden", services: "cut", starts_at, staff: <first name>, client_id: <the demo client Jo Bloggs> }\`, \`starts_at\` exactly as availability gave it. The slots are planned before timing from the availability of the whole ${book.windowDays}-day advance window (in process, before any booking), staff by staff, in time order, each one starting after the previous one's end and buffer, so each stays free until its turn: ${book.planned} slots. The 2026-07-28 client and the in-process side book the same sequence (each in its own database); the 2025 client, which shares the server's database, books the slots after it. All of this after every find_slots call (which all saw empty diaries): ${book.warmUp} untimed bookings per side, the same way, at a location the benchmark adds to its copy of the demo catalogue ("${WARM_UP.location}", like Camden, with one stylist of its own who does cuts every day: they take none of the timed slots, and the server's booking path is warm, as that of a server booking all day is), then ${bookModern.calls} timed ones each in ${ROUNDS} alternating blocks${book.capped ? ` (fewer than the ${calls} of the other rows: that is all the demo diaries hold)` : ''}. A call resolves location, services, staff and client, looks for a live booking of the client at that location and instant (one indexed query: a retry worded differently gets that booking, never a second), checks the idempotency key and that the slot is still free and writes the booking, its services, its event and its idempotency record in one SQLite transaction (WAL, synchronous FULL), reads the booking back and words it for speech (\`bookOnce\`, \`speakBookings\`). Every answer must be ok with a new reference for the slot and staff member asked, or the benchmark does not run.`,
          `Answer sizes, in characters of the answer's JSON (\`structuredContent\`; the text content is the same JSON), which a voice agent keeps in its context: tools/list, the largest five-slot find_slots answer and the largest book answer seen over HTTP above, a book answer for a deposit hold (in process, on a fresh copy of the database), and the largest five-slot find_slots answer of the whole demo catalogue: in process on a fresh copy, every location, every service bookable there alone and every pair of them, each day of the week from today, over one day and two, the whole day and each part of it (\`bench/lib/find-slots-sizes.ts\`, which a test runs too).`,
        ],
        timings,
        ratios: [
          ...ratioRows('find_slots', findModern, findLegacy, findLocal),
          ...ratioRows('book', bookModern, bookLegacy, bookLocal),
        ],
        targets: [
          ...latencyTargets(TARGET_P99_MS.find_slots, findModern, findLegacy),
          ...latencyTargets(TARGET_P99_MS.book, bookModern, bookLegacy),
          ...sizeTargets(sizes),
          {
            description: 'Every answer ok (find_slots with slots, book with a new reference), every side',
            measured: `${answers.toLocaleString('en-GB')} answers, all ok`,
            pass: true,
          },
        ],
      };
    } finally {
      for (const client of clients) await client.close().catch(() => undefined);
      for (const agent of agents) agent.destroy();
      await server?.stop();
      await local.database.dispose();
    }
  },
};

function latencyTargets(p99Ms: number, ...overHttp: Timing[]) {
  return overHttp.flatMap((http) => [
    {
      description: `${http.label}: p50 < ${TARGET_P50_MS} ms`,
      measured: `${formatMs(http.p50)} ms`,
      pass: http.p50 < TARGET_P50_MS,
    },
    {
      description: `${http.label}: p99 < ${p99Ms} ms`,
      measured: `${formatMs(http.p99)} ms`,
      pass: http.p99 < p99Ms,
    },
  ]);
}

function ratioRows(tool: string, modern: Timing, legacy: Timing, local: Timing) {
  return [modern, legacy].map((http, i) => ({
    label: `${tool}, ${i === 0 ? '2026-07-28' : '2025-11-25'} over HTTP p50 / in-process p50`,
    value: `×${(http.p50 / local.p50).toFixed(2)} (MCP over HTTP adds ${formatMs(http.p50 - local.p50)} ms at p50)`,
  }));
}

/**
 * The largest answers seen over HTTP, in characters of JSON (what a voice agent keeps in its context):
 * tools/list, a find_slots answer with five slots, a book answer, and a book answer for a deposit hold;
 * and the largest five-slot find_slots answer of the whole demo catalogue (largestFindSlotsSize).
 */
interface AnswerSizes {
  toolsList: number;
  findSlots: number;
  largestFind: LargestAnswer | undefined;
  book: number;
  held: number;
}

/** A client of one protocol generation as a side: its tools/call answers, MCP errors thrown. */
function httpSide(client: Client, era: 'modern' | 'legacy', sizes: AnswerSizes): Side {
  return {
    name: `over Streamable HTTP, protocol ${era === 'modern' ? '2026-07-28' : '2025-11-25'}`,
    era,
    async call(tool, args) {
      const result = (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult;
      if (result.isError) {
        const text = (result.content[0] as { text?: string } | undefined)?.text;
        throw new Error(`${tool.name} answered with an MCP error: ${text}`);
      }
      const answer = result.structuredContent as Json;
      // The sizes are those of the demo catalogue's answers, not of the benchmark's warm-up location.
      if (args.location === WARM_UP.location) return answer;
      const size = JSON.stringify(answer).length;
      if (tool === findSlotsTool && answer?.slots?.length === 5)
        sizes.findSlots = Math.max(sizes.findSlots, size);
      if (tool === bookTool && answer?.ok) sizes.book = Math.max(sizes.book, size);
      return answer;
    },
  };
}

/**
 * The answer to booking a service with a deposit (a hold), in characters: made in process on a fresh
 * copy of the demo database (the timed bookings fill the diaries the HTTP sides use). A tool's answer
 * is the same JSON in process and over HTTP (find_slots compares them whole above).
 */
async function heldBookingSize(): Promise<number> {
  // A deposit is held only where a payment provider can take it: the built-in test mode.
  return withFreshDemo(localCheckout, async (apiFor, fresh) => {
    const api = await apiFor();
    const args = { location: MCP_SCENARIO.location, services: 'full colour' };
    const found = await findSlotsTool.run({ ...args, date: 'tomorrow' } as never, { api });
    const held = await bookTool.run(
      { ...args, starts_at: (found as Json).slots[0].starts_at, client_id: fresh.clientId } as never,
      { api },
    );
    if ((held as Json).status !== 'pending_payment') throw new Error(`Not held: ${JSON.stringify(held)}`);
    // As the tool answers it: with caller_supplied, which the tool kit adds.
    const answer = await toolResult(
      bookTool.name,
      async () => held,
      () => {},
      bookTool.callerSupplied,
    );
    return JSON.stringify(answer.structuredContent).length;
  });
}

/**
 * The largest five-slot find_slots answer of the demo catalogue, in characters (largestFindSlotsAnswer):
 * every location, service and pair of services, day and part of the day of the week from today, asked
 * in process on a fresh copy of the demo database (as heldBookingSize). The timed questions (Camden's
 * cut in the afternoon) are not the largest: a location with Booking Protection and a service with a
 * deposit say more, and two services name both.
 */
async function largestFindSlotsSize(): Promise<LargestAnswer> {
  return withFreshDemo(undefined, async (apiFor) => {
    const options = {
      apiFor,
      onFault: (error: unknown) => {
        throw error;
      },
    };
    const call = async (name: string, args: Args) =>
      (await callTool(options, { name, arguments: args }, undefined, '2025-11-25')).structuredContent;
    const today = localDateAt(Date.parse(MCP_SCENARIO.now), MCP_SCENARIO.timezone);
    // The benchmark's own location is no part of the demo catalogue.
    return await largestFindSlotsAnswer(call, today, [WARM_UP.location]);
  });
}

/**
 * Runs `work` on a fresh copy of the demo database at the scenario's time, its tools' API made with
 * the read_write key (and `payments`, where given), and disposes of the copy after.
 */
async function withFreshDemo<T>(
  payments: PaymentProvider | undefined,
  work: (
    apiFor: () => Promise<InProcessBookingApi>,
    fresh: Awaited<ReturnType<typeof createMcpBenchDatabase>>,
  ) => Promise<T>,
): Promise<T> {
  const fresh = await createMcpBenchDatabase();
  try {
    const deps = createAppDeps({
      db: fresh.database.db,
      clock: new ManualClock(MCP_SCENARIO.now),
      secret: randomBytes(32).toString('base64url'),
      ...(payments ? { payments } : {}),
    });
    const principal = await principalOfKey(deps, fresh.writeKey);
    return await work(
      () => InProcessBookingApi.forToolCall(deps, principal, { publicBaseUrl: 'http://127.0.0.1:8080' }),
      fresh,
    );
  } finally {
    await fresh.database.dispose();
  }
}

/** design.md 8.1 and issue "MCP for live calls": answers an agent's context can afford. */
function sizeTargets(sizes: AnswerSizes) {
  const target = (description: string, measured: number, limit: number, where = '') => ({
    description: `${description} < ${limit.toLocaleString('en-GB')} characters of JSON`,
    measured: `${measured.toLocaleString('en-GB')}${where}`,
    pass: measured > 0 && measured < limit,
  });
  const largest = sizes.largestFind;
  return [
    target('tools/list', sizes.toolsList, 16_000),
    target('Largest five-slot find_slots answer of the timed questions', sizes.findSlots, 1_500),
    target(
      'Largest five-slot find_slots answer of the demo catalogue (every location, service, pair of services, day and part of the day of a week)',
      largest?.size ?? 0,
      1_500,
      largest
        ? ` (${describeQuestion(largest.args)}; ${largest.measured.toLocaleString('en-GB')} answers measured)`
        : '',
    ),
    target('Largest book answer', sizes.book, 1_500),
    // docs/decisions/hosted-pages.md ("The link is sent by the outbox"): every Booking carries booking_page_url
    // since the hosted pages, about 95 characters, so a hold's answer has 1,600; and 50 more for
    // caller_supplied ("Caller-supplied text is data").
    target('A book answer for a deposit hold', sizes.held, 1_650),
  ];
}

async function timeFindSlots(context: BenchContext, sides: readonly Side[], calls: number) {
  const today = localDateAt(Date.parse(MCP_SCENARIO.now), MCP_SCENARIO.timezone);
  const questions: Args[] = [];
  for (let day = 0; day < FIND_WEEKS * 7; day += 1) {
    const date = addDays(today, day);
    if (new Date(`${date}T12:00:00Z`).getUTCDay() === 0) continue;
    questions.push({
      location: MCP_SCENARIO.location,
      services: MCP_SCENARIO.service,
      date,
      time_of_day: 'afternoon',
    });
  }
  const check = (side: Side, args: Args, answer: Json) => {
    if (answer?.ok !== true || !Array.isArray(answer.slots) || answer.slots.length === 0) {
      throw new Error(
        `find_slots ${side.name} for ${JSON.stringify(args)} answered without slots: ${JSON.stringify(answer)}`,
      );
    }
  };

  context.progress(`find_slots: asking every side the ${questions.length} questions and comparing…`);
  for (const args of questions) {
    const answers: Json[] = [];
    for (const side of sides) {
      const answer = JSON.parse(JSON.stringify(await side.call(findSlotsTool, args)));
      check(side, args, answer);
      answers.push(answer);
    }
    for (const [i, answer] of answers.entries()) {
      if (!isDeepStrictEqual(answer, answers[0])) {
        throw new Error(
          `find_slots ${JSON.stringify(args)}: the answers differ.\n${sides[0]!.name}: ${JSON.stringify(answers[0])}\n${sides[i]!.name}: ${JSON.stringify(answer)}`,
        );
      }
    }
  }
  const argsAt = (i: number) => questions[i % questions.length]!;
  const timings = await timeAlternating(context, 'find_slots', sides, {
    warmUp: FIND_WARM_UP,
    calls,
    call: (side, i) => side.call(findSlotsTool, argsAt(i)),
    check: (side, i, answer) => check(side, argsAt(i), answer),
  });
  return { timings, dates: questions.length, untimed: sides.length * (questions.length + FIND_WARM_UP) };
}

interface PlannedSlot {
  startsAt: string;
  staffId: string;
  staffName: string;
}

async function timeBook(
  context: BenchContext,
  sides: readonly Side[],
  calls: number,
  planned: Awaited<ReturnType<typeof planSlots>>,
  warmUpSlots: readonly PlannedSlot[],
  clientId: string,
) {
  const { slots, bufferMinutes, windowDays } = planned;
  // The two HTTP clients share the server's database, so the 2025 one books the second half, of the
  // timed slots and of the warm-up's.
  const half = Math.floor(slots.length / 2);
  const timed = Math.min(calls, half);
  if (timed < MIN_CALLS) {
    throw new Error(`Only ${slots.length} free slots to book: fewer than 2 × ${MIN_CALLS}.`);
  }
  const warmUpHalf = Math.floor(warmUpSlots.length / 2);
  const warmUp = Math.min(BOOK_WARM_UP, warmUpHalf);
  // Warm-up calls first (i < warmUp), at the other location; then the timed ones.
  const placed = (side: Side, i: number) => {
    const legacy = side.era === 'legacy';
    return i < warmUp
      ? { location: WARM_UP.location, slot: warmUpSlots[legacy ? warmUpHalf + i : i]! }
      : { location: MCP_SCENARIO.location, slot: slots[(legacy ? half : 0) + i - warmUp]! };
  };
  const argsOf = ({ location, slot }: { location: string; slot: PlannedSlot }) => ({
    location,
    services: MCP_SCENARIO.service,
    starts_at: slot.startsAt,
    staff: slot.staffName.split(' ')[0],
    client_id: clientId,
  });
  const references = new Set<string>();
  const timings = await timeAlternating(context, 'book', sides, {
    warmUp,
    calls: timed,
    call: (side, i) => side.call(bookTool, argsOf(placed(side, i))),
    check: (side, i, answer) => {
      const { slot } = placed(side, i);
      const booking = answer?.ok === true ? answer.booking : undefined;
      const reference = `${side.name} ${booking?.reference}`;
      if (
        !booking?.reference ||
        references.has(reference) ||
        booking.starts_at !== slot.startsAt ||
        booking.staff_name !== slot.staffName
      ) {
        throw new Error(
          `book ${side.name} of ${JSON.stringify(argsOf(placed(side, i)))} did not make a new booking: ${JSON.stringify(answer)}`,
        );
      }
      references.add(reference);
    },
  });
  return {
    timings,
    planned: slots.length,
    capped: timed < calls,
    bufferMinutes,
    windowDays,
    warmUp,
    untimed: sides.length * warmUp,
  };
}

/**
 * Free slots of the service at a location over its whole advance window, staff by staff in time order, each
 * starting no earlier than the previous one's end plus the service's buffer: booked in this order, each
 * is still free when its turn comes. Read in process, before any booking.
 */
export async function planSlots(
  deps: AppDeps,
  principal: Principal,
  location: string,
): Promise<{ slots: PlannedSlot[]; bufferMinutes: number; windowDays: number }> {
  const api = await InProcessBookingApi.forToolCall(deps, principal, { publicBaseUrl: 'http://127.0.0.1' });
  const place = await resolveLocation(api, location);
  const [service] = await resolveServices(api, place, MCP_SCENARIO.service);
  const team = new Map((await api.listStaff(place.location.slug)).map((s) => [s.id, s.name]));
  const { db } = deps;
  const { buffer_after_minutes: bufferMinutes } = await db
    .selectFrom('services')
    .select('buffer_after_minutes')
    .where('id', '=', service!.id)
    .executeTakeFirstOrThrow();
  const { max_advance_days: windowDays } = await db
    .selectFrom('locations')
    .select('max_advance_days')
    .where('slug', '=', place.location.slug)
    .executeTakeFirstOrThrow();
  const today = localDateAt(api.now(), place.zone);
  const free: { startsAt: string; endsAt: string; staffId: string }[] = [];
  for (let day = 0; day <= windowDays; day += AVAILABILITY_DAYS) {
    const found = await api.availability(place.location.slug, {
      serviceIds: [service!.id],
      date: addDays(today, day),
      days: AVAILABILITY_DAYS,
    });
    for (const slot of found.slots)
      free.push({ startsAt: slot.starts_at, endsAt: slot.ends_at, staffId: slot.staff_id });
  }
  free.sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt));
  const slots: PlannedSlot[] = [];
  for (const [staffId, staffName] of team) {
    let freeFrom = Number.NEGATIVE_INFINITY;
    for (const slot of free) {
      if (slot.staffId !== staffId || Date.parse(slot.startsAt) < freeFrom) continue;
      slots.push({ startsAt: slot.startsAt, staffId, staffName });
      freeFrom = Date.parse(slot.endsAt) + bufferMinutes * 60_000;
    }
  }
  return { slots, bufferMinutes, windowDays };
}

interface Alternating<T> {
  warmUp: number;
  /** Timed calls per side. */
  calls: number;
  /** The i-th call of a side (warm-up calls first, then the timed ones). */
  call(side: Side, i: number): Promise<T>;
  /** Throws on an answer that is not what the benchmark needs; not timed. */
  check(side: Side, i: number, answer: T): void;
}

/**
 * Warm-up calls on each side, then the timed calls of every side in ROUNDS blocks, taking turns in the
 * order given, each call timed on its own with performance.now() and its answer checked afterwards.
 */
async function timeAlternating<T>(
  context: BenchContext,
  tool: string,
  sides: readonly Side[],
  plan: Alternating<T>,
): Promise<Timing[]> {
  context.progress(`${tool}: ${plan.warmUp} warm-up calls per side…`);
  for (const side of sides) {
    for (let i = 0; i < plan.warmUp; i += 1) plan.check(side, i, await plan.call(side, i));
  }
  const times = new Map<Side, number[]>(sides.map((side) => [side, []]));
  const perRound = Math.ceil(plan.calls / ROUNDS);
  for (let round = 0; round < ROUNDS; round += 1) {
    const from = plan.warmUp + round * perRound;
    const to = plan.warmUp + Math.min(plan.calls, (round + 1) * perRound);
    for (const side of sides) {
      context.progress(`${tool}: round ${round + 1}/${ROUNDS}, ${to - from} timed calls ${side.name}…`);
      const sideTimes = times.get(side)!;
      for (let i = from; i < to; i += 1) {
        const start = performance.now();
        const answer = await plan.call(side, i);
        sideTimes.push(performance.now() - start);
        plan.check(side, i, answer);
      }
    }
  }
  return sides.map((side) =>
    summariseTimes(
      side.era ? `${tool} ${side.name}` : `${tool} in process (tool run, no MCP, no HTTP)`,
      times.get(side)!,
    ),
  );
}
