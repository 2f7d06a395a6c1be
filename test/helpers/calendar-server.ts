import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/**
 * A loopback HTTP server of iCalendar files for the busy-calendar tests: each path answers what the
 * test set for it (a body with an ETag and Last-Modified, honouring If-None-Match with 304, gzipped if
 * asked; a status; or no answer at all), and every request's conditional headers are recorded.
 */
export type Served =
  | { body: string; etag?: string; lastModified?: string; gzip?: boolean }
  | { status: number }
  | { hang: true };

export interface CalendarServer {
  url(path: string): string;
  serve(path: string, what: Served): void;
  requests: { path: string; ifNoneMatch: string | undefined; ifModifiedSince: string | undefined }[];
  close(): Promise<void>;
}

export async function startCalendarServer(): Promise<CalendarServer> {
  const routes = new Map<string, Served>();
  const requests: CalendarServer['requests'] = [];
  const server = http.createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push({
      path,
      ifNoneMatch: request.headers['if-none-match'],
      ifModifiedSince: request.headers['if-modified-since'],
    });
    const what = routes.get(path);
    if (!what) {
      response.writeHead(404).end();
      return;
    }
    if ('hang' in what) return;
    if ('status' in what) {
      response.writeHead(what.status).end();
      return;
    }
    if (what.etag && request.headers['if-none-match'] === what.etag) {
      response.writeHead(304, { etag: what.etag }).end();
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/calendar; charset=utf-8',
      ...(what.etag && { etag: what.etag }),
      ...(what.lastModified && { 'last-modified': what.lastModified }),
      ...(what.gzip && { 'content-encoding': 'gzip' }),
    });
    response.end(what.gzip ? gzipSync(what.body) : what.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    serve: (path, what) => routes.set(path, what),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An iCalendar file of these lines between BEGIN:VCALENDAR and END:VCALENDAR, CRLF-ended. */
export function ics(...lines: string[]): string {
  return `${['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//busy//EN', ...lines, 'END:VCALENDAR'].join('\r\n')}\r\n`;
}

/** Europe/London as Google and Apple write it in their files. */
export const LONDON_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Europe/London',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0000',
  'TZOFFSETTO:+0100',
  'TZNAME:BST',
  'DTSTART:19700329T010000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0000',
  'TZNAME:GMT',
  'DTSTART:19701025T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];
