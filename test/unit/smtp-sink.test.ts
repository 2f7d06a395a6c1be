import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { startSmtpSink } from '../helpers/message-sinks.ts';

// The crash tests kill an instance while the sink holds its messages: the sink must outlive a sender
// whose connection is reset in the middle of a transaction (smtp-server reports that as an 'error').
it('the SMTP stand-in outlives a sender reset in the middle of a message', async () => {
  const sink = await startSmtpSink();
  const socket = connect(Number(new URL(sink.url).port), '127.0.0.1');
  socket.on('error', () => undefined);
  let heard = '';
  socket.on('data', (chunk: Buffer) => {
    heard += chunk.toString();
  });
  const say = async (line: string, answer: string) => {
    heard = '';
    socket.write(`${line}\r\n`);
    while (!heard.includes(answer)) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  while (!heard.startsWith('220 ')) await new Promise((resolve) => setTimeout(resolve, 5));
  await say('EHLO sender', '250 ');
  await say('MAIL FROM:<salon@example.com>', '250');
  socket.resetAndDestroy();
  await new Promise((resolve) => setTimeout(resolve, 100));
  // Still answering a new sender.
  const next = connect(Number(new URL(sink.url).port), '127.0.0.1');
  const greeting = await new Promise<string>((resolve) =>
    next.once('data', (chunk) => resolve(chunk.toString())),
  );
  next.destroy();
  expect(greeting).toMatch(/^220 /);
  await sink.close();
});
