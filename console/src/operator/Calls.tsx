import { CallLog } from '../calls/CallLog.tsx';

/** Every account's calls, with the channel each went through. */
export const Calls = () => <CallLog operator={true} />;
