/** Entry point run by Storm's ShellSpout: `node kinesis-spout.js [config.json]`. */
import { runSpout } from './run';

runSpout();
