import { CallLog } from '../calls/CallLog.tsx';

/** The account's own calls (the route never names a channel). */
export const Calls = () => <CallLog operator={false} />;
