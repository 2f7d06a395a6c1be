import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The series example of docs/recurring.md, taken from the page as it is and booked against the demo
 * catalogue at the real time of the run: a newcomer copies it today, not on the day it was written. The
 * page leaves the ids and the first visit's time for the reader to fill ("…"); the test fills them as a
 * reader would (the demo's Amara, a cut, Jo; a Tuesday at 10:00 in London, Amara's hours). A fixed date
 * written back into the example is booked as written, and fails once it is past Camden's
 * max_advance_days.
 */
const ELLIPSIS = '…';

/** The page's series example: the ```json block that carries `repeat`. */
function seriesExample(markdown: string): Record<string, unknown> {
  const blocks = [...markdown.matchAll(/^```json\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1]!)
    .filter((block) => block.includes('"repeat"'));
  if (blocks.length !== 1) throw new Error(`expected one series example, found ${blocks.length}`);
  return JSON.parse(blocks[0]!);
}

/** The Tuesdays at 10:00 in London from tomorrow on, the first `weeks` of them, with their offsets. */
function tuesdaysAtTen(from: DateTime, weeks: number): string[] {
  let day = from.setZone('Europe/London').plus({ days: 1 }).startOf('day');
  while (day.weekday !== 2) day = day.plus({ days: 1 });
  return Array.from(
    { length: weeks },
    (_, i) => day.plus({ weeks: i }).set({ hour: 10 }).toISO({ suppressMilliseconds: true })!,
  );
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    catalogues: [demoCatalogue()],
    now: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString(),
  });
});
afterAll(async () => {
  await t.close();
});

describe('docs/recurring.md', () => {
  it('books its series example against the demo catalogue today', async () => {
    const example = seriesExample(readFileSync(path.join(REPO_ROOT, 'docs/recurring.md'), 'utf8'));
    const ids = await catalogueIds(t.database.db);
    const filled = {
      ...example,
      ...(example.service_ids?.toString() === ELLIPSIS && { service_ids: [ids.services.cut] }),
      ...(example.staff_id === ELLIPSIS && { staff_id: ids.staff.amara }),
      ...(example.client_id === ELLIPSIS && { client_id: ids.jo }),
    };
    // A reader picks another week when a visit of theirs falls on a closure; a date the page fixes is
    // tried as it is.
    const starts =
      example.starts_at === ELLIPSIS
        ? tuesdaysAtTen(DateTime.fromMillis(t.clock.nowMs()), 4)
        : [example.starts_at];
    const answers: string[] = [];
    for (const startsAt of starts) {
      const response = await postBooking(t, { ...filled, starts_at: startsAt });
      if (response.statusCode === 201) {
        expect(response.json().data.series.occurrences).toHaveLength(6);
        return;
      }
      answers.push(`${startsAt}: ${response.statusCode} ${response.body}`);
    }
    expect.fail(`the example was refused:\n${answers.join('\n')}`);
  });
});
