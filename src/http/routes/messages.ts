import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppDeps } from '../../app/deps.ts';
import { takeMessage } from '../../app/message-service.ts';
import { AUTHENTICATED_ERRORS, dataOf, ErrorEnvelope, NoQuery } from '../../contract/common.ts';
import { MessageResource, NewMessageBody, presentMessage } from '../../contract/message.ts';
import { principalOf } from '../authenticate.ts';

/** POST /messages: a message a caller leaves for staff (an addition to v1). */
export function messageRoutes(deps: AppDeps): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/messages',
      {
        schema: {
          tags: ['Messages'],
          operationId: 'leaveMessage',
          summary: 'Leave a message for staff from a caller (call me back, tell my stylist …)',
          description:
            'What a receptionist takes when it cannot do what the caller asks; staff see it in the console ' +
            'and with `booking messages list`. An addition to the v1 contract.',
          querystring: NoQuery,
          body: NewMessageBody,
          response: {
            201: dataOf(MessageResource),
            400: ErrorEnvelope.describe('invalid_request naming the field.'),
            404: ErrorEnvelope.describe('not_found: unknown location or booking reference.'),
            413: ErrorEnvelope.describe('payload_too_large.'),
            ...AUTHENTICATED_ERRORS,
          },
        },
      },
      async (request, reply) => {
        const { body } = request;
        const message = await takeMessage(
          deps.db,
          principalOf(request).organisation.id,
          {
            callerName: body.caller_name,
            phone: body.phone,
            message: body.message,
            reference: body.reference,
            locationSlug: body.location_slug,
          },
          deps.clock.nowMs(),
        );
        return reply.code(201).send({ data: presentMessage(message) });
      },
    );
  };
}
