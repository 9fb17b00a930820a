import { Type, type Static } from 'typebox';

// The answer to an image or video submit: one element per submitted task.
export const SubmitReceipt = Type.Object(
  {
    code: Type.Literal(200),
    data: Type.Array(Type.Object({ status: Type.Literal('submitted'), task_id: Type.String() })),
  },
  { $id: 'SubmitReceipt' },
);
export type SubmitReceipt = Static<typeof SubmitReceipt>;

const Links = { url: Type.Array(Type.String()), expires_at: Type.Integer({ description: 'Unix time; the links stop working then' }) };

// The task record: returned by GET /v1/tasks/{id} (wrapped) and pushed to callbacks (unwrapped);
// built by task-record.ts.
export const TaskRecord = Type.Object(
  {
    id: Type.String(),
    status: Type.Union([Type.Literal('submitted'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')]),
    progress: Type.Integer({ minimum: 0, maximum: 100 }),
    created: Type.Integer({ description: 'Unix time, seconds' }),
    completed: Type.Optional(Type.Integer({ description: 'Unix time, seconds; on terminal records' })),
    actual_time: Type.Optional(Type.Integer({ description: 'Seconds taken; on success' })),
    cost: Type.Optional(Type.Number({ description: 'Charge in the balance unit; on terminal records' })),
    credits_cost: Type.Optional(Type.Number({ description: 'Charge in credits' })),
    result: Type.Optional(
      Type.Object(
        {
          images: Type.Optional(Type.Array(Type.Object(Links))),
          videos: Type.Optional(
            Type.Array(
              Type.Object({
                ...Links,
                duration: Type.Number({ description: 'Seconds' }),
                resolution: Type.String(),
                last_frame_url: Type.Optional(Type.String({ description: 'When return_last_frame was set' })),
              }),
            ),
          ),
          audios: Type.Optional(Type.Array(Type.Object(Links))),
        },
        { additionalProperties: true },
      ),
    ),
    error: Type.Optional(Type.Object({ message: Type.String(), code: Type.String() })),
  },
  { $id: 'TaskRecord' },
);
export type TaskRecord = Static<typeof TaskRecord>;
