package io.github.kinesisshellspout;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The streams the spout process emits on, read from the {@code kinesis.spout} map: what the Java side
 * must declare so that the process's handshake check (declared fields = configured fields) passes. The map
 * was checked against the configuration's schema first ({@link ConfigSchema}): here only the defaults and
 * the one rule between keys that the schema cannot say.
 */
final class SpoutStreams implements Serializable {
    private static final long serialVersionUID = 1L;

    static final List<String> DEFAULT_OUTPUT_FIELDS = List.of("partitionKey", "data", "shardId", "sequenceNumber", "arrivalTimestamp");
    static final String DEFAULT_OUTPUT_STREAM = "default";
    static final String DEFAULT_DEAD_LETTER_STREAM = "deadLetter";
    /** What a dead letter carries after the output fields (contract C3). */
    static final List<String> DEAD_LETTER_EXTRA_FIELDS = List.of("attempts", "lastFailureTime");
    /** And, with {@code maxRecordAgeMs} set, why it was set aside ({@code maxRetries} or {@code tooOld}) and its age. */
    static final List<String> DEAD_LETTER_REASON_FIELDS = List.of("reason", "ageMs");

    final List<String> outputFields;
    /** The first Kinesis stream's Storm stream (the only one without {@code streams}). */
    final String outputStream;
    /** Every Storm stream the records are emitted on, in the order of {@code streams}, each once. */
    final List<String> outputStreams;
    /** Null unless {@code retry.onExhausted} is {@code deadLetter}. */
    final String deadLetterStream;
    /** {@code maxRecordAgeMs} is set: dead letters carry their reason and age too. */
    private final boolean reasons;

    private SpoutStreams(List<String> outputFields, List<String> outputStreams, String deadLetterStream, boolean reasons) {
        this.outputFields = outputFields;
        this.outputStream = outputStreams.get(0);
        this.outputStreams = outputStreams;
        this.deadLetterStream = deadLetterStream;
        this.reasons = reasons;
    }

    /** @param spoutConf a map the schema accepted */
    @SuppressWarnings("unchecked")
    static SpoutStreams from(Map<String, Object> spoutConf) {
        Object fields = spoutConf.get("outputFields");
        List<String> outputFields = fields == null ? DEFAULT_OUTPUT_FIELDS : List.copyOf((List<String>) fields);
        String stream = (String) spoutConf.getOrDefault("outputStream", DEFAULT_OUTPUT_STREAM);
        // Several Kinesis streams ({@code streams}): each entry's own output stream, else the top level's.
        List<String> streams = new ArrayList<>();
        Object entries = spoutConf.get("streams");
        if (entries == null) {
            streams.add(stream);
        } else {
            for (Object entry : (List<Object>) entries) {
                String own = (String) ((Map<String, Object>) entry).getOrDefault("outputStream", stream);
                if (!streams.contains(own)) {
                    streams.add(own);
                }
            }
        }
        Map<String, Object> retry = (Map<String, Object>) spoutConf.getOrDefault("retry", Map.of());
        if (!"deadLetter".equals(retry.get("onExhausted"))) {
            return new SpoutStreams(outputFields, List.copyOf(streams), null, false);
        }
        String deadLetters = (String) retry.getOrDefault("deadLetterStream", DEFAULT_DEAD_LETTER_STREAM);
        if (streams.contains(deadLetters)) {
            throw new IllegalArgumentException("bad configuration: kinesis.spout.retry.deadLetterStream = \"" + deadLetters
                + "\": must differ from outputStream" + (entries == null ? "" : " (and from every entry's of streams)"));
        }
        return new SpoutStreams(outputFields, List.copyOf(streams), deadLetters, spoutConf.get("maxRecordAgeMs") != null);
    }

    /** The output fields, then the attempts and the time of the last failure, then (maxRecordAgeMs) the reason and the age. */
    List<String> deadLetterFields() {
        List<String> fields = new ArrayList<>(outputFields);
        fields.addAll(DEAD_LETTER_EXTRA_FIELDS);
        if (reasons) {
            fields.addAll(DEAD_LETTER_REASON_FIELDS);
        }
        return fields;
    }
}
