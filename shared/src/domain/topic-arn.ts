/** Parts of an SNS topic ARN, `arn:<partition>:sns:<region>:<account>:<name>`. */

export function topicPartition(topicArn: string): string | undefined {
  return topicArn.split(':')[1];
}

export function topicRegion(topicArn: string): string | undefined {
  return topicArn.split(':')[3];
}

export function topicAccount(topicArn: string): string | undefined {
  return topicArn.split(':')[4];
}
