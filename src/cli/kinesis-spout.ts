/** Entry point run by Storm's ShellSpout: `node kinesis-spout.cjs [config.json]`. */
import { runSpout } from './run';

runSpout();
