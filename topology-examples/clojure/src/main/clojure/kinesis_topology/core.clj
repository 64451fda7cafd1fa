(ns kinesis-topology.core
  "The topology of ../java in Storm's Clojure DSL: the Kinesis spout (KinesisShellSpout, from the
  kinesis-shell-spout dependency, running the bundled kinesis-spout.cjs), a bolt recording each tuple (one JSON line per tuple
  in the file `outputFile`), and a bolt acking it. Same JSON configuration file as the Java example.

    storm jar target/kinesis-topology-clojure-0.1.0-standalone.jar clojure.main -m kinesis-topology.core remote config.json
    java -cp target/kinesis-topology-clojure-0.1.0.jar:$(cat target/classpath.txt) clojure.main -m kinesis-topology.core local config.json"
  (:require [org.apache.storm.clojure :refer [ack! bolt bolt-spec defbolt emit-bolt! local-cluster
                                               spout-spec submit-remote-topology topology]])
  (:import [io.github.kinesisshellspout KinesisShellSpout]
           [java.io BufferedReader FileOutputStream InputStreamReader]
           [java.nio.charset StandardCharsets]
           [org.apache.storm Config]
           [org.apache.storm.shade.net.minidev.json JSONValue]))

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
  (let [;; Declares its stream and fields from the map, passes the map to its tasks, and registers what
        ;; Kryo needs for dataFormat json (in its own component conf, which the DSL's :conf refuses).
        spout (KinesisShellSpout. (spout-conf cfg))
        stream (.outputStream spout)
        spouts (get cfg "spoutParallelism" 2)
        bolts (get cfg "boltParallelism" 2)
        grouping (if (some #{"partitionKey"} (.outputFields spout)) ["partitionKey"] :shuffle)]
    (topology
     {"kinesis" (spout-spec spout :p spouts)}
     {"record" (bolt-spec {["kinesis" stream] grouping} (recorder (get cfg "outputFile")) :p bolts)
      "ack" (bolt-spec {"record" ["id"]} acker :p bolts)})))

(defn topology-conf [cfg]
  (let [conf (Config.)]
    (.setNumWorkers conf (int (get cfg "workers" 2)))
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
