(ns kinesis-topology.core
  "The topology of ../java in Storm's Clojure DSL: the Kinesis spout as a shell-spout-spec running the
  bundled kinesis-spout.cjs from the jar's resources/, a bolt recording each tuple (one JSON line per tuple
  in the file `outputFile`), and a bolt acking it. Same JSON configuration file as the Java example.

    storm jar target/kinesis-topology-clojure-0.1.0-standalone.jar clojure.main -m kinesis-topology.core remote config.json
    java -cp target/kinesis-topology-clojure-0.1.0.jar:$(cat target/classpath.txt) clojure.main -m kinesis-topology.core local config.json"
  (:require [org.apache.storm.clojure :refer [ack! bolt bolt-spec defbolt emit-bolt! local-cluster
                                               shell-spout-spec submit-remote-topology topology]])
  (:import [java.io BufferedReader FileOutputStream InputStreamReader]
           [java.nio.charset StandardCharsets]
           [org.apache.storm Config]
           [org.apache.storm.shade.net.minidev.json JSONValue]))

(def default-fields ["partitionKey" "data" "shardId" "sequenceNumber" "arrivalTimestamp"])

(def json-types
  "What parsed record data (dataFormat json) is in a tuple, Storm parsing the script's frames with its
  shaded json-smart; Kryo refuses them between workers unless registered."
  ["org.apache.storm.shade.net.minidev.json.JSONObject" "org.apache.storm.shade.net.minidev.json.JSONArray"])

(defn spout-conf
  "The `kinesis.spout` map: the file's short keys, then everything under \"spout\" (zookeeper merged)."
  [cfg]
  (let [extra (into {} (get cfg "spout"))
        short-keys (for [[key from] {"streamName" "stream", "region" "region", "endpoint" "endpoint", "dataFormat" "dataFormat"}
                         :let [value (get cfg from)]
                         :when (some? value)]
                     [key value])
        zookeeper (merge (when-let [connect (get cfg "zookeeper")] {"connect" connect})
                         (into {} (get extra "zookeeper")))]
    (assoc (merge (into {} short-keys) (dissoc extra "zookeeper")) "zookeeper" zookeeper)))

(defn- message-id [values]
  (if (and (contains? values "shardId") (contains? values "sequenceNumber"))
    (str (get values "shardId") ":" (get values "sequenceNumber"))
    ""))

(defbolt recorder ["id"] {:params [output-file] :prepare true}
  [conf context collector]
  ;; One write per line to a file opened for appending: lines of tasks in other workers never interleave.
  (let [out (FileOutputStream. ^String output-file true)
        worker-tasks (set (.getThisWorkerTasks context))]
    (bolt
     (execute [tuple]
       (let [values (into {} (for [field (.getFields tuple)] [field (.getValueByField tuple field)]))
             data (get values "data")
             id (message-id values)
             event {"event" "received"
                    "id" id
                    "values" values
                    "dataClass" (some-> data class .getName)
                    "task" (.getThisTaskId context)
                    "worker" (.getThisWorkerPort context)
                    "sourceTask" (.getSourceTask tuple)
                    "fromOtherWorker" (not (contains? worker-tasks (.getSourceTask tuple)))
                    "at" (System/currentTimeMillis)}]
         (.write out (.getBytes (str (JSONValue/toJSONString event) "\n") StandardCharsets/UTF_8))
         (emit-bolt! collector [id] :anchor tuple)
         (ack! collector tuple)))
     (cleanup [] (.close out)))))

(defbolt acker [] [tuple collector]
  (ack! collector tuple))

(defn make-topology [cfg]
  (let [conf (spout-conf cfg)
        fields (vec (or (get conf "outputFields") default-fields))
        stream (get conf "outputStream" "default")
        spouts (get cfg "spoutParallelism" 2)
        bolts (get cfg "boltParallelism" 2)
        grouping (if (some #{"partitionKey"} fields) ["partitionKey"] :shuffle)]
    (topology
     {"kinesis" (shell-spout-spec ["node" "kinesis-spout.cjs"] {stream fields}
                                  :p spouts :conf {"kinesis.spout" conf})}
     {"record" (bolt-spec {["kinesis" stream] grouping} (recorder (get cfg "outputFile")) :p bolts)
      "ack" (bolt-spec {"record" ["id"]} acker :p bolts)})))

(defn topology-conf [cfg]
  (let [conf (Config.)]
    (.setNumWorkers conf (int (get cfg "workers" 2)))
    ;; In the topology conf: TopologyBuilder refuses Kryo registrations in a spec's :conf.
    (when (= "json" (get (spout-conf cfg) "dataFormat"))
      (doseq [type json-types] (.registerSerialization conf (Class/forName type))))
    (.putAll conf (into {} (get cfg "storm")))
    conf))

(defn- run-local
  "Runs in an in-process LocalCluster until stdin closes or says `kill` (the Java example's protocol)."
  [name conf topo]
  (let [cluster (local-cluster)
        stdin (BufferedReader. (InputStreamReader. System/in StandardCharsets/UTF_8))]
    (.submitTopology cluster name conf topo)
    (println "control: submitted" name)
    (flush)
    (loop []
      (let [line (.readLine stdin)]
        (when-not (or (nil? line) (= "kill" (.trim ^String line)))
          (recur))))
    (.close cluster)
    (println "control: stopped")
    (flush)
    (System/exit 0)))

(defn -main [mode config-file]
  (let [cfg (JSONValue/parse ^String (slurp config-file))
        name (get cfg "topologyName" "kinesis-example")
        conf (topology-conf cfg)
        topo (make-topology cfg)]
    (case mode
      "remote" (submit-remote-topology name conf topo)
      "local" (run-local name conf topo))))
