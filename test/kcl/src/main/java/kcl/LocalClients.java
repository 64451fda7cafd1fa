package kcl;

import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.Protocol;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.cloudwatch.CloudWatchAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient;

/**
 * The clients a KCL application here is given: the Kinesis emulator and dynalite on loopback, over HTTP/1.1
 * and JSON (the SDK's defaults for Kinesis are CBOR and, in KCL's own client builder, HTTP/2), static
 * credentials, and a CloudWatch client that is never called (metrics go to NullMetricsFactory) pointed at a
 * closed loopback port, should anything try.
 */
final class LocalClients {
    final KinesisAsyncClient kinesis;
    final DynamoDbAsyncClient dynamo;
    final CloudWatchAsyncClient cloudWatch;

    LocalClients(String region, String accessKey, String kinesisEndpoint, String dynamoEndpoint) {
        System.setProperty("aws.cborEnabled", "false");
        Region where = Region.of(region);
        StaticCredentialsProvider credentials =
                StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, accessKey));
        kinesis = KinesisAsyncClient.builder()
                .region(where)
                .credentialsProvider(credentials)
                .endpointOverride(URI.create(kinesisEndpoint))
                .httpClient(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1).build())
                .build();
        dynamo = DynamoDbAsyncClient.builder()
                .region(where)
                .credentialsProvider(credentials)
                .endpointOverride(URI.create(dynamoEndpoint))
                .httpClient(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1).build())
                .build();
        cloudWatch = CloudWatchAsyncClient.builder()
                .region(where)
                .credentialsProvider(credentials)
                .endpointOverride(URI.create("http://127.0.0.1:9"))
                .build();
    }
}
